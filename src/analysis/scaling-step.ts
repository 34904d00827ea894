import type { LevelSummary } from '../metrics/summarize.js'

/**
 * What going from one level to a higher one bought: throughput gained, per doubling of the
 * concurrency really achieved, and what it cost in TTFT. The knee and each level's verdict are
 * judged on these figures, and quote them.
 */

export type ScalingFigures = Pick<
  LevelSummary,
  'value' | 'output_tokens_per_s' | 'ttft_ms' | 'success_rate'
> &
  Partial<
    Pick<LevelSummary, 'output_tokens_per_s_steady' | 'steady_window' | 'achieved_concurrency' | 'server'>
  >

export interface ScalingStep {
  from: number
  to: number
  /** Throughput change, as a fraction: 0.12 = +12%. */
  gain: number
  /** The same gain spread over the doublings of achieved concurrency: (T_b/T_a)^(1/log2(n_b/n_a)) - 1. */
  gain_per_doubling: number
  /** TTFT at the higher level / at the lower one; null without both. */
  ttft_ratio: number | null
}

/**
 * A gain that pays for the added streams. By Little's law a doubling of streams that adds g
 * throughput makes each request take 2/(1+g) times as long: below MIN_GAIN_PER_DOUBLING that is
 * over 1.67x, so most of the added concurrency is spent waiting. Gains spread over several doublings
 * count as well once they add MIN_TOTAL_GAIN in all; and a gain under NOISE_GAIN is within the
 * run-to-run noise of a shared machine, whatever the step.
 */
export const MIN_GAIN_PER_DOUBLING = 0.2
export const MIN_TOTAL_GAIN = 0.25
export const NOISE_GAIN = 0.1

/**
 * Whether a step between two levels is judged on their steady windows: only when both had one. A
 * step is judged on one quantity at both ends: a level with fewer requests than streams never holds
 * them and has no steady window, and its whole-window rate (which a saturated server's drain keeps
 * high) must not be set against another level's steady rate (which the start-up burst keeps low).
 */
function bothSteady(a: ScalingFigures, b: ScalingFigures): boolean {
  return a.steady_window != null && b.steady_window != null
}

/** The throughput a step is judged on: over the steady windows when both levels had one. */
function stepThroughput(level: ScalingFigures, steady: boolean): number {
  return steady ? (level.steady_window?.output_tokens_per_s ?? 0) : level.output_tokens_per_s
}

/**
 * The concurrency the scaling math uses: the streams really in flight (a "64" level that only ever
 * had 40 requests in flight counts as 40), never more than the nominal value; within the steady
 * window when the step is judged on it. In request-rate mode the level value is a rate, the load
 * offered, and is used as it is.
 */
function stepConcurrency(level: ScalingFigures, steady: boolean, rateMode: boolean): number {
  if (rateMode) return level.value
  const achieved = steady ? level.steady_window?.mean_in_flight : level.achieved_concurrency?.mean
  return achieved === undefined || achieved <= 0 ? level.value : Math.min(level.value, achieved)
}

export function ttftOf(level: ScalingFigures, ttftKey: string): number | null {
  const value = level.ttft_ms[ttftKey] ?? level.ttft_ms.mean
  return value === null || value === undefined || value <= 0 ? null : value
}

export function scalingStep(
  a: ScalingFigures,
  b: ScalingFigures,
  ttftKey: string,
  rateMode = false,
): ScalingStep | null {
  const steady = bothSteady(a, b)
  const ta = stepThroughput(a, steady)
  const tb = stepThroughput(b, steady)
  if (ta <= 0) return null
  const gain = tb / ta - 1
  const doublings = Math.log2(stepConcurrency(b, steady, rateMode) / stepConcurrency(a, steady, rateMode))
  // Levels that achieved the same concurrency: any gain is noise, treated as one full doubling.
  const perDoubling = doublings > 0.05 ? (tb / ta) ** (1 / doublings) - 1 : gain
  const ttftA = ttftOf(a, ttftKey)
  const ttftB = ttftOf(b, ttftKey)
  return {
    from: a.value,
    to: b.value,
    gain,
    gain_per_doubling: perDoubling,
    ttft_ratio: ttftA !== null && ttftB !== null ? ttftB / ttftA : null,
  }
}

/** The higher level bought a throughput gain worth its streams (see MIN_GAIN_PER_DOUBLING). */
export function isMeaningfulGain(step: ScalingStep): boolean {
  return (
    step.gain >= NOISE_GAIN &&
    (step.gain_per_doubling >= MIN_GAIN_PER_DOUBLING || step.gain >= MIN_TOTAL_GAIN)
  )
}

/** "throughput +12% from 8 (+12% per doubling), TTFT p95 x2.8" */
export function describeStep(step: ScalingStep, ttftKey: string): string {
  const ttft = step.ttft_ratio === null ? '' : `, TTFT ${ttftKey} x${step.ttft_ratio.toFixed(1)}`
  return `throughput ${signedPercent(step.gain)} from ${step.from}${perDoublingText(step)}${ttft}`
}

/** " (+10% per doubling)" when that differs from the plain gain (the step was not one doubling), else "". */
export function perDoublingText(step: ScalingStep): string {
  return Math.abs(step.gain_per_doubling - step.gain) >= 0.005
    ? ` (${signedPercent(step.gain_per_doubling)} per doubling)`
    : ''
}

export function signedPercent(fraction: number): string {
  const value = Math.round(fraction * 100)
  return `${value >= 0 ? '+' : ''}${value}%`
}

/** Each level's step from the next lower level tried, by level value (the lowest has none). */
export function stepsFromBelow(
  levels: readonly ScalingFigures[],
  ttftKey: string,
  rateMode = false,
): Map<number, ScalingStep> {
  const sorted = [...levels].sort((x, y) => x.value - y.value)
  const steps = new Map<number, ScalingStep>()
  for (let i = 1; i < sorted.length; i++) {
    const step = scalingStep(sorted[i - 1] as ScalingFigures, sorted[i] as ScalingFigures, ttftKey, rateMode)
    if (step !== null) steps.set(step.to, step)
  }
  return steps
}
