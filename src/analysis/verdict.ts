import type { LevelSummary, Verdict } from '../metrics/summarize.js'
import { openLoopOverloaded } from './open-loop.js'
import type { Saturation } from './saturation.js'
import { describeStep, isMeaningfulGain, type ScalingStep } from './scaling-step.js'

/**
 * A level whose success rate is below this, or that saw a timeout, is overloaded. Failures that are
 * not load (a few over-long prompts refused with HTTP 400) do not count against it.
 */
export const MIN_HEALTHY_SUCCESS_RATE = 0.99

export const ADVICE: Record<Verdict, string> = {
  healthy: 'not saturated: keep adding concurrency',
  saturated:
    'past the knee: more streams add little throughput and wait instead; the knee level is the capacity',
  overloaded: 'success rate falls or timeouts appear: back off to the previous level',
  'client-bound': 'the client was the bottleneck: use more workers or machines, then re-run',
  misconfigured: 'the requests failed for reasons that are not load: fix the set-up and re-run',
}

/**
 * The diagnosis of one level (its rules and their limits: docs/figures.md, Verdict), given the whole gradient's saturation point and the
 * step from the level below (a level whose throughput rose meaningfully is never "saturated").
 */
export function levelVerdict(
  level: Pick<LevelSummary, 'value' | 'success_rate' | 'errors' | 'client' | 'requests'> &
    Partial<Pick<LevelSummary, 'misconfiguration' | 'non_load_failures' | 'open_loop'>>,
  saturation: Saturation | null,
  step: ScalingStep | null = null,
): Verdict {
  // Before the rest: a level the server refused says nothing about the client or the load.
  if (level.misconfiguration != null) return 'misconfigured'
  if (level.client.bound) return 'client-bound'
  const notLoad = (level.non_load_failures?.requests ?? 0) / Math.max(1, level.requests)
  if (
    level.requests > 0 &&
    (level.success_rate + notLoad < MIN_HEALTHY_SUCCESS_RATE || level.errors.timeout > 0)
  ) {
    return 'overloaded'
  }
  if (openLoopOverloaded(level)) return 'overloaded'
  const rose = step !== null && isMeaningfulGain(step)
  if (saturation !== null && level.value > saturation.value && !rose) return 'saturated'
  return 'healthy'
}

/** The level's advice, after its own figures (throughput change from the level below, TTFT ratio). */
export function adviceFor(
  verdict: Verdict,
  value: number,
  saturation: Saturation | null,
  step: ScalingStep | null = null,
  ttftKey = 'p95',
): string {
  const figures = step === null ? '' : `${describeStep(step, ttftKey)}: `
  return figures + adviceText(verdict, value, saturation)
}

function adviceText(verdict: Verdict, value: number, saturation: Saturation | null): string {
  if (verdict !== 'healthy' || saturation === null) return ADVICE[verdict]
  if (saturation.value === value) return 'saturation point: record this level as capacity'
  if (value < saturation.value) return `below the knee at ${saturation.value}: throughput still grows`
  return `above the knee at ${saturation.value} but rose from the level below: noisy figures, re-run to confirm`
}
