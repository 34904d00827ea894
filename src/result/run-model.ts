import type { LevelSummary } from '../metrics/summarize.js'
import type { CapacityModel } from '../model/capacity-model.js'
import type { ModelEvidenceSeen } from '../model/evidence.js'
import { fitCapacity } from '../model/fit.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { RunMeta } from './run-meta.js'

/**
 * The capacity model of the server a run measured (model/fit.ts), from its levels, what its records
 * showed of prefill and decode, and the server's word; undefined where there is nothing to fit (no level ran, or the
 * endpoint generates no tokens, as embeddings).
 */
export function runModel(
  levels: readonly LevelSummary[],
  meta: RunMeta,
  knee: number | null,
  seen: ModelEvidenceSeen | null,
): CapacityModel | undefined {
  // A meta cut down to a few fields (older files, tests) has no workload to fit on.
  if (
    levels.length === 0 ||
    meta.workload === undefined ||
    !protocolOf(meta.target?.protocol).generatesTokens
  )
    return undefined
  return fitCapacity({
    prefill: seen?.prefill ?? { points: [], source: 'ttft' },
    decode: seen?.decode ?? { overlap: [], stall: [] },
    levels,
    mode: meta.load?.mode ?? 'concurrency',
    server: meta.server ?? null,
    knee,
    workload: { input_tokens: meta.workload.input_tokens, output_tokens: meta.workload.output_tokens },
  })
}

/** The level at which one request runs alone: 1 in a closed loop that ran it, none otherwise. */
export function soloLevel(meta: RunMeta): number | null {
  return (meta.load?.mode ?? 'concurrency') === 'concurrency' && (meta.load?.levels ?? []).includes(1)
    ? 1
    : null
}
