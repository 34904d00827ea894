import type { Saturation } from '../analysis/saturation.js'
import { targetIndexOf } from '../metrics/target-levels.js'
import type { RequestRecord } from '../records/types.js'
import type { RunMeta } from '../result/run-meta.js'
import type { RunRecords } from './compare.js'

/**
 * A --paired run's folder as the two sides `compare` judges: A (the first target, the base) and B
 * (the second), each its own records, with one run's meta, client and no drift verdict (the pairs
 * take drift out: compare judges them pair by pair, CompareOptions.paired).
 */
export function pairedSides(run: {
  meta: RunMeta
  records: readonly RequestRecord[]
  levels?: RunRecords['levels']
  targets?: readonly { saturation: Saturation | null; endpoint: string; model: string }[]
}): { base: RunRecords; next: RunRecords; names: [string, string] } | null {
  const { split } = run.meta
  if (split?.paired !== true) return null
  const sides: RequestRecord[][] = [[], []]
  for (const record of run.records) sides[targetIndexOf(split, record)]?.push(record)
  const side = (t: 0 | 1): RunRecords => ({
    meta: run.meta,
    records: sides[t] as RequestRecord[],
    ...(run.levels === undefined ? {} : { levels: run.levels }),
    ...(run.targets?.[t] === undefined ? {} : { saturation: run.targets[t].saturation }),
    drift: null,
  })
  const name = (t: 0 | 1): string => {
    const target = run.targets?.[t]
    return target === undefined ? `target ${t + 1}` : `${target.endpoint} (${target.model})`
  }
  return { base: side(0), next: side(1), names: [name(0), name(1)] }
}
