import type { LoadedRun } from '../result/load-run.js'
import { type CompareOptions, type Comparison, compareRuns } from './compare.js'
import { pairedSides } from './paired-sides.js'

/**
 * The judgement of a --paired run's folder, B against A pair by pair: what `compare DIR` prints and
 * what `run --paired --gate` ends with, one code path for both. Null when the folder is not a paired run.
 */
export function judgePairedRun(
  run: LoadedRun & { records: NonNullable<LoadedRun['records']> },
  gates: Record<string, number>,
  options: Omit<CompareOptions, 'paired' | 'pairedMode'> = {},
): { comparison: Comparison; names: [string, string] } | null {
  const sides = pairedSides({ ...run.result, records: run.records })
  if (sides === null) return null
  return {
    names: sides.names,
    comparison: compareRuns(sides.base, sides.next, gates, {
      ...options,
      paired: true,
      pairedMode: run.result.meta.split?.paired_mode ?? 'interleave',
    }),
  }
}
