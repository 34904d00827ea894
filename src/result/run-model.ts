import type { LevelSummary } from '../metrics/summarize.js'
import type { CapacityModel } from '../model/capacity-model.js'
import { fitCapacity } from '../model/fit.js'
import type { PrefillPoint } from '../model/prefill-evidence.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { RunMeta } from './run-meta.js'

/** The prefill evidence a run gathered (model/prefill-evidence.ts). */
export interface PrefillSeen {
  points: readonly PrefillPoint[]
  source: 'timings' | 'ttft'
}

/**
 * The capacity model of the server a run measured (model/fit.ts), from its levels, its prefill
 * evidence and the server's word; undefined where there is nothing to fit (no level ran, or the
 * endpoint generates no tokens, as embeddings).
 */
export function runModel(
  levels: readonly LevelSummary[],
  meta: RunMeta,
  knee: number | null,
  prefill: PrefillSeen | null,
): CapacityModel | undefined {
  if (levels.length === 0 || !protocolOf(meta.target?.protocol).generatesTokens) return undefined
  return fitCapacity({
    prefill: prefill ?? { points: [], source: 'ttft' },
    levels,
    mode: meta.load.mode ?? 'concurrency',
    server: meta.server ?? null,
    knee,
    workload: { input_tokens: meta.workload.input_tokens, output_tokens: meta.workload.output_tokens },
  })
}

/** The level at which one request runs alone: 1 in a closed loop that ran it, none otherwise. */
export function soloLevel(meta: RunMeta): number | null {
  return (meta.load.mode ?? 'concurrency') === 'concurrency' && meta.load.levels.includes(1) ? 1 : null
}
