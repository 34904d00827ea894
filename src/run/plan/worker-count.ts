import { availableParallelism } from 'node:os'
import type { RunConfig } from '../../config/types.js'

/** `auto`: one worker thread per core (the main thread only writes records), at most one per stream. */
export function resolveWorkers(
  workers: number | 'auto',
  levels: readonly number[],
  cores = availableParallelism(),
  mode: RunConfig['load']['mode'] = 'concurrency',
): number {
  // An open loop's in-flight count is not known in advance: every worker may be needed.
  const widest = mode === 'request_rate' ? Number.POSITIVE_INFINITY : Math.max(1, ...levels)
  return Math.min(workers === 'auto' ? Math.max(1, cores) : workers, widest)
}
