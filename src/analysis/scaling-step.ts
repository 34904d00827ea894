import type { Interval, ThroughputInterval } from '../metrics/intervals.js'
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
    Pick<
      LevelSummary,
      'output_tokens_per_s_steady' | 'steady_window' | 'achieved_concurrency' | 'server' | 'intervals'
    >
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
  /** The 95% interval of `gain`; null when either level has no throughput interval (older results). */
  gain_interval: [number, number] | null
  /**
   * What the step says about throughput, on its interval: `gains` when even its low end pays for the
   * added streams (isMeaningfulGain), `flat` when even its high end does not, `unclear` between.
   * Without an interval, on the point figure: `gains` or `flat`.
   */
  throughput: 'gains' | 'flat' | 'unclear'
  /**
   * Whether latency grew beyond noise: TTFT p50 or E2E p50 at least LATENCY_GROWTH times the lower
   * level's, on their intervals' near ends; without intervals, TTFT (the run's key) MIN_TTFT_RATIO times.
   */
  latency_grew: boolean
}

/** A latency this many times the lower level's, interval against interval, grew beyond noise. */
export const LATENCY_GROWTH = 1.25
/** Without intervals (older results), TTFT must climb this much: the extra streams queue. */
export const MIN_TTFT_RATIO = 1.5

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
  const ttftA = ttftOf(a, ttftKey)
  const ttftB = ttftOf(b, ttftKey)
  const gainInterval = ratioInterval(ta, tb, throughputIntervalOf(a, steady), throughputIntervalOf(b, steady))
  const pays = (g: number) => isMeaningful(g, perDoubling(g, doublings))
  const ttftRatio = ttftA !== null && ttftB !== null ? ttftB / ttftA : null
  return {
    from: a.value,
    to: b.value,
    gain,
    gain_per_doubling: perDoubling(gain, doublings),
    ttft_ratio: ttftRatio,
    gain_interval: gainInterval,
    throughput:
      gainInterval === null
        ? pays(gain)
          ? 'gains'
          : 'flat'
        : pays(gainInterval[0])
          ? 'gains'
          : pays(gainInterval[1])
            ? 'unclear'
            : 'flat',
    latency_grew:
      a.intervals == null || b.intervals == null
        ? (ttftRatio ?? 0) >= MIN_TTFT_RATIO
        : grewBeyondNoise(a.intervals.ttft_ms.p50, b.intervals.ttft_ms.p50, a.ttft_ms.p50) ||
          grewBeyondNoise(a.intervals.ttft_ms[ttftKey], b.intervals.ttft_ms[ttftKey], a.ttft_ms[ttftKey]) ||
          grewBeyondNoise(a.intervals.e2e_ms?.p50, b.intervals.e2e_ms?.p50, null),
  }
}

/** The gain spread over the doublings; levels that achieved the same concurrency count one full doubling (any gain is noise). */
function perDoubling(gain: number, doublings: number): number {
  return doublings > 0.05 ? (1 + gain) ** (1 / doublings) - 1 : gain
}

function throughputIntervalOf(level: ScalingFigures, steady: boolean): ThroughputInterval | null {
  const intervals = level.intervals
  if (intervals == null) return null
  return steady ? intervals.output_tokens_per_s_steady : intervals.output_tokens_per_s
}

/**
 * The 95% interval of tb/ta - 1 from each level's own interval: on the log scale the two
 * half-widths add in quadrature (independent levels). Null without both, or with an interval that
 * reaches 0 (too short a window to say anything).
 */
function ratioInterval(
  ta: number,
  tb: number,
  a: ThroughputInterval | null,
  b: ThroughputInterval | null,
): [number, number] | null {
  if (a === null || b === null || !(tb > 0)) return null
  const halfA = logHalfWidth(a)
  const halfB = logHalfWidth(b)
  if (halfA === null || halfB === null) return null
  const half = Math.hypot(halfA, halfB)
  const center = Math.log(tb / ta)
  return [Math.exp(center - half) - 1, Math.exp(center + half) - 1]
}

function logHalfWidth(interval: Interval): number | null {
  if (interval.low === null || interval.high === null || !(interval.low > 0)) return null
  return (Math.log(interval.high) - Math.log(interval.low)) / 2
}

/**
 * b's low end at least LATENCY_GROWTH times a's high end: the two cannot be the same latency. A
 * tail percentile of few requests has no high end; then a's own figure stands in for it (the lower
 * level's tail is the tighter one: its requests did not queue).
 */
function grewBeyondNoise(
  a: Interval | undefined,
  b: Interval | undefined,
  aFigure: number | null | undefined,
): boolean {
  const high = a?.high ?? aFigure
  if (high == null || b?.low == null || !(high > 0)) return false
  return b.low / high >= LATENCY_GROWTH
}

/** The higher level bought a throughput gain worth its streams (see MIN_GAIN_PER_DOUBLING). */
export function isMeaningfulGain(step: ScalingStep): boolean {
  return isMeaningful(step.gain, step.gain_per_doubling)
}

/** The same rule on a gain and its rate per doubling: also for a predicted curve (model/predict.ts). */
export function isMeaningful(gain: number, gainPerDoubling: number): boolean {
  return gain >= NOISE_GAIN && (gainPerDoubling >= MIN_GAIN_PER_DOUBLING || gain >= MIN_TOTAL_GAIN)
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
