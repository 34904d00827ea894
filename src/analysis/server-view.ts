import type { LevelSummary } from '../metrics/summarize.js'
import type { Engine } from './engine-settings.js'
import type { KneeContext, LevelServerView } from './knee-cause.js'
import { runRoundTrip } from './network.js'

type LevelFigures = Pick<
  LevelSummary,
  'value' | 'achieved_concurrency' | 'ttft_ms' | 'itl_ms' | 'client' | 'server' | 'in_band' | 'network'
> &
  Partial<Pick<LevelSummary, 'reasoning'>>

/** What explainKnee needs of a level, read from its summary: the client's figures beside the server's. */
export function serverViewOf(level: LevelFigures): LevelServerView {
  const server = level.server ?? null
  // A server that hides its reasoning: the client's TTFT holds the thinking, the server's does not.
  const hidden = (level.reasoning?.reasoning_hidden ?? 0) > 0
  return {
    value: level.value,
    client_ttft_p50_ms: hidden ? null : (level.ttft_ms.p50 ?? null),
    itl_p99_ms: level.itl_ms.p99 ?? null,
    client_bound: level.client.bound,
    server_ttft_p50_ms: server?.ttft_ms_bucketed?.p50 ?? null,
    queue_before_engine_p50_ms: level.in_band?.queue_ms.p50 ?? null,
    running_max: server?.running?.max ?? null,
    running_mean: server?.running?.mean ?? null,
    waiting_mean: server?.waiting?.mean ?? null,
    in_flight_mean: level.achieved_concurrency?.mean ?? null,
    kv_usage_max: server?.kv_cache_usage?.max ?? null,
    preemptions: server?.preemptions ?? null,
  }
}

/**
 * What explainKnee needs of the run beside its levels: the server's slots and engine as it described
 * itself (meta.server, shaped like result/server-self.ts's ServerSelf), and the round trip the levels measured.
 */
export function kneeContextOf(
  levels: readonly LevelFigures[],
  server: { slots: number | null; engine: Engine | null } | null | undefined,
): KneeContext {
  return { slots: server?.slots ?? null, engine: server?.engine ?? null, roundTrip: runRoundTrip(levels) }
}
