import type { LevelSummary, Verdict } from '../metrics/summarize.js'
import { openLoopOverloaded } from './open-loop.js'
import { gainWithInterval, type Saturation } from './saturation.js'
import { describeStep, NOISE_GAIN, type ScalingFigures, type ScalingStep } from './scaling-step.js'

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
  interrupted: 'cut short by an interrupt: shown, not judged, and not used for the knee',
}

/**
 * The diagnosis of one level (its rules and their limits: docs/figures.md, Verdict), given the
 * whole gradient's saturation point and the step from the level below. Past the knee a level is
 * `saturated` unless the step into it gained throughput beyond noise while the server (where it
 * has gauges) still ran every stream: one model decides the knee and the verdicts beside it.
 */
export function levelVerdict(
  level: Pick<LevelSummary, 'value' | 'success_rate' | 'errors' | 'client' | 'requests'> &
    Partial<Pick<LevelSummary, 'misconfiguration' | 'non_load_failures' | 'interrupted' | 'open_loop'>> &
    Partial<ScalingFigures>,
  saturation: Saturation | null,
  step: ScalingStep | null = null,
): Verdict {
  if (level.interrupted === true) return 'interrupted'
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
  if (saturation === null || level.value <= saturation.value) return 'healthy'
  const serverFull = saturation.full_from !== undefined && level.value >= saturation.full_from
  return step?.throughput === 'gains' && !serverFull ? 'healthy' : 'saturated'
}

/** What a level's advice may say beyond its verdict: whether the gradient could not place a knee. */
export interface AdviceContext {
  ttftKey: string
  /** The top step, when the figures could not tell a plateau from growth (kneeUndecided). */
  undecided: ScalingStep | null
  /** What a healthy level may add more of: streams in concurrency mode, load (requests/s) in request-rate mode. */
  adds?: 'concurrency' | 'load'
  /** The lowest overloaded level above this one, when the gradient placed no knee; null otherwise. */
  overloadedAbove?: number | null
}

/** The level's advice, after its own figures (throughput change from the level below, TTFT ratio). */
export function adviceFor(
  verdict: Verdict,
  level: Pick<LevelSummary, 'value' | 'success_rate' | 'requests'> &
    Partial<Pick<LevelSummary, 'errors' | 'failed'>>,
  saturation: Saturation | null,
  step: ScalingStep | null = null,
  context: AdviceContext = { ttftKey: 'p95', undecided: null },
): string {
  if (verdict === 'interrupted') return `${ADVICE.interrupted} (${level.requests} requests measured)`
  const figures = step === null ? '' : `${describeStep(step, context.ttftKey)}: `
  if (verdict === 'overloaded') return figures + overloadedText(level)
  if (verdict === 'healthy' && saturation === null && context.overloadedAbove != null)
    return `${figures}healthy here, but ${context.overloadedAbove} is overloaded: the capacity lies between them`
  return (
    figures +
    adviceText(verdict, level.value, saturation, context.undecided, step).replace(
      'keep adding concurrency',
      `keep adding ${context.adds ?? 'concurrency'}`,
    )
  )
}

/** "success rate 93.0% (2 of 30 failed), 1 timeout: back off to the previous level": its own figures, no trend claimed. */
function overloadedText(
  level: Pick<LevelSummary, 'success_rate' | 'requests'> & Partial<Pick<LevelSummary, 'errors' | 'failed'>>,
): string {
  const timeouts = level.errors?.timeout ?? 0
  const failed = level.failed ?? Math.round(level.requests * (1 - level.success_rate))
  const parts = [
    `success rate ${(level.success_rate * 100).toFixed(1)}% (${failed} of ${level.requests} failed)`,
    ...(timeouts > 0 ? [`${timeouts} timeout${timeouts === 1 ? '' : 's'}`] : []),
  ]
  return `${parts.join(', ')}: back off to the previous level`
}

/**
 * The advice after the step's figures, worded from the same evidence as the verdict: a sentence
 * that says "little throughput" beside "+48%", or "still grows" beside "−23%", contradicts the
 * number it follows (issue 36). The step decides which words fit: `gains` (beyond noise), `flat`
 * (not even its high end pays), `unclear` (between).
 */
function adviceText(
  verdict: Verdict,
  value: number,
  saturation: Saturation | null,
  undecided: ScalingStep | null,
  step: ScalingStep | null,
): string {
  if (verdict === 'saturated') return saturatedText(saturation, step)
  if (verdict !== 'healthy') return ADVICE[verdict]
  if (saturation === null) {
    if (undecided !== null && value === undecided.to)
      return `no clear knee: throughput ${gainWithInterval(undecided)} from ${undecided.from} cannot tell growth from a plateau; more requests per level would`
    if (step !== null && step.throughput !== 'gains')
      return step.gain < 0
        ? 'no knee placed, though throughput fell from the level below within its noise: more requests per level would tell'
        : 'no knee placed, though this step gained little beyond noise: more requests per level would tell'
    return ADVICE.healthy
  }
  if (saturation.value === value) return 'saturation point: record this level as capacity'
  if (value < saturation.value) {
    if (step === null || step.throughput === 'gains')
      return `below the knee at ${saturation.value}: throughput still grows`
    return `below the knee at ${saturation.value}, which the levels above it place: this step alone did not gain beyond noise`
  }
  return `above the knee at ${saturation.value} but throughput rose beyond noise from the level below while the server ran every stream: re-run to confirm`
}

/** Past the knee: what the step into this level shows, in words that agree with its figures. */
function saturatedText(saturation: Saturation | null, step: ScalingStep | null): string {
  const knee = saturation === null ? 'the knee' : `the knee at ${saturation.value}`
  // "little throughput" fits a flat step, and an unclear one whose point gain is within noise.
  if (
    step === null ||
    step.throughput === 'flat' ||
    (step.throughput === 'unclear' && step.gain < NOISE_GAIN)
  )
    return ADVICE.saturated
  if (step.throughput === 'gains')
    return (
      `past ${knee}: throughput still rose, but the server ran full` +
      `${saturation?.full_from === undefined ? '' : ` from ${saturation.full_from}`} and the added streams wait; the knee level is the capacity`
    )
  return `past ${knee}: the change from ${step.from} (${gainWithInterval(step)}) cannot be told from a plateau, while the added streams cost latency; the knee level is the capacity`
}
