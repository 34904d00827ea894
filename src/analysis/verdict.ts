import type { LevelSummary, Verdict } from '../metrics/summarize.js'
import type { Saturation } from './saturation.js'

/** A level whose success rate is below this, or that saw a timeout, is overloaded. */
export const MIN_HEALTHY_SUCCESS_RATE = 0.99

export const ADVICE: Record<Verdict, string> = {
  healthy: 'not saturated: keep adding concurrency',
  saturated: 'throughput flat while TTFT climbs: the previous knee level is the capacity',
  overloaded: 'success rate falls or timeouts appear: back off to the previous level',
  'client-bound': 'the client was the bottleneck: use more workers or machines, then re-run',
  misconfigured: 'the requests failed for reasons that are not load: fix the set-up and re-run',
}

/** The source article's diagnosis of one level, given the whole gradient's saturation point. */
export function levelVerdict(
  level: Pick<LevelSummary, 'concurrency' | 'success_rate' | 'errors' | 'client' | 'requests'> &
    Partial<Pick<LevelSummary, 'misconfiguration'>>,
  saturation: Saturation | null,
): Verdict {
  // Before the rest: a level the server refused says nothing about the client or the load.
  if (level.misconfiguration != null) return 'misconfigured'
  if (level.client.bound) return 'client-bound'
  if (level.requests > 0 && (level.success_rate < MIN_HEALTHY_SUCCESS_RATE || level.errors.timeout > 0)) {
    return 'overloaded'
  }
  if (saturation !== null && level.concurrency > saturation.concurrency) return 'saturated'
  return 'healthy'
}

export function adviceFor(verdict: Verdict, concurrency: number, saturation: Saturation | null): string {
  if (verdict === 'healthy' && saturation?.concurrency === concurrency) {
    return 'saturation point: record this level as capacity'
  }
  return ADVICE[verdict]
}
