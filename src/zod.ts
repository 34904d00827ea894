import { createRequire } from 'node:module'
import type { z as zod } from 'zod'

/**
 * zod through its CommonJS build. Its ESM entry imports its ~50 locale files at once, one open file
 * each, which alone fails under `ulimit -n 64` (EMFILE before any command runs); require() reads
 * them one after another.
 */
export const z: typeof zod = (createRequire(import.meta.url)('zod') as { z: typeof zod }).z

/** The zod types this project names, beside the value above (a type-only namespace merges with it). */
export declare namespace z {
  type ZodType = zod.ZodType
  type infer<T extends zod.ZodType> = zod.infer<T>
  namespace core {
    type $ZodLooseShape = zod.core.$ZodLooseShape
    type $ZodIssue = zod.core.$ZodIssue
    type $ZodType = zod.core.$ZodType
  }
}
