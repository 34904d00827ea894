import { describeValue } from './describe-value.js'
import type { z } from './zod.js'

/**
 * Zod's findings as one line a person can act on: the key path, what was expected there and what
 * the file holds, in the words the config errors use (config/errors.ts). Shared by the config
 * files and the files of a result folder, so both name a bad value the same way.
 */

/** How key paths are spelled: as file keys ("bench.concurrency_levels[2]") or as flags ("--levels[2]"). */
export type PathStyle = 'keys' | 'flags'

/** Formats a zod path: ["bench", "concurrency_levels", 2] -> "bench.concurrency_levels[2]". */
export function formatPath(path: readonly PropertyKey[], style: PathStyle = 'keys'): string {
  let out = ''
  for (const [i, seg] of path.entries()) {
    if (typeof seg === 'number') out += `[${seg}]`
    else if (i === 0 && style === 'flags') out += `--${String(seg).replaceAll('_', '-')}`
    else if (typeof seg === 'string' && /^[A-Za-z_][\w-]*$/.test(seg)) out += i === 0 ? seg : `.${seg}`
    else out += `[${JSON.stringify(String(seg))}]`
  }
  return out
}

/** The raw value at a zod path, so messages show what the user actually wrote. */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = data
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined
    cur = Reflect.get(cur, seg)
  }
  return cur
}

/**
 * `PATH: expected ..., got ...` for the first thing `schema` refuses in `data`, or null when it
 * accepts it. The schema's leaves carry the phrase after "expected" as their error; the found value
 * is read from `data` itself, so it is shown as written.
 */
export function firstSchemaIssue(schema: z.ZodType, data: unknown): string | null {
  const result = schema.safeParse(data)
  if (result.success) return null
  const issue = result.error.issues[0] as z.core.$ZodIssue
  const found = describeFound(valueAt(data, issue.path))
  const path = formatPath(issue.path)
  return `${path === '' ? '' : `${path}: `}expected ${issue.message}, got ${found}`
}

/** A number JSON.parse read as Infinity was written too large for a double (1e999): say so. */
function describeFound(found: unknown): string {
  if (typeof found === 'number' && !Number.isFinite(found))
    return `${describeValue(found)} (a number too large to hold)`
  return describeValue(found)
}
