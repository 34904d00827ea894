import type { LoadMode } from '../metrics/summarize.js'
import type { KneeCause } from './knee-cause.js'
import {
  isMeaningfulGain,
  perDoublingText,
  type ScalingFigures,
  type ScalingStep,
  scalingStep,
  signedPercent,
} from './scaling-step.js'

export interface Saturation {
  /** The knee level: streams, or requests per second as `mode` says. */
  value: number
  mode: LoadMode
  reason: string
  /**
   * The two levels tried between which the true knee lies: the knee and the next level up, or the
   * level below and the knee when throughput had already stalled going into it. Where to add a
   * level (or bisect with --refine) to place it. Absent in results of older versions.
   */
  bracket?: [number, number] | null
  /** Why the knee is there, from the server's figures at and past it (see knee-cause.ts); absent in older results. */
  cause?: KneeCause
  /** Why the knee may not be where it is (the environment drifted during the run: drift.ts); absent when nothing says so. */
  uncertain?: string
}

/** TTFT must climb at least this much beyond the knee: the extra streams queue instead of adding work. */
export const MIN_TTFT_RATIO = 1.5
/** Below this success rate, a falling success rate ends the levels the knee is looked for in. */
const HELD_SUCCESS_RATE = 0.99

/**
 * The knee of the gradient: where throughput stops growing for good. It is the lowest level k after
 * which no higher level adds a meaningful throughput gain over k (see isMeaningfulGain: at least 10%,
 * and 20% per doubling of the concurrency achieved or 25% in all) while TTFT at some higher level
 * climbs at least MIN_TTFT_RATIO over k (the added streams wait). Judged against every higher level,
 * not only the next one, so a weak step that later levels make up for (CPU engines scale
 * sub-linearly from c=1, and prefill interference makes steps uneven) is not a knee, and a slightly
 * lower throughput after the peak does not move it. Only levels up to the first one whose success
 * rate falls (below 99%, and stays below at every higher level) are searched; when none of them is a knee, the last level that held is. Returns null
 * when throughput still grows meaningfully at the top level tried: not saturated.
 */
export function findSaturation(
  levels: readonly ScalingFigures[],
  ttftKey = 'p95',
  rateMode = false,
): Saturation | null {
  const sorted = [...levels].sort((x, y) => x.value - y.value)
  const mode: LoadMode = rateMode ? 'request_rate' : 'concurrency'
  // A fall counts when it lasts: from it on, no level holds again. One failed request at a low level
  // of a healthy server (a blip) must not end the search for the knee there.
  const fall = sorted.findIndex(
    (b, i) =>
      i > 0 &&
      b.success_rate < (sorted[i - 1] as ScalingFigures).success_rate &&
      sorted.slice(i).every((later) => later.success_rate < HELD_SUCCESS_RATE),
  )
  // The first level whose success rate fell still shows whether throughput grew up to it; none beyond.
  const held = fall > 0 ? sorted.slice(0, fall + 1) : sorted
  /** The lowest level whose throughput flattened while the server still ran every stream added past it. */
  let admittedFrom: number | null = null
  for (let k = 0; k < held.length - 1; k++) {
    const knee = held[k] as ScalingFigures
    const steps = held.slice(k + 1).map((higher) => scalingStep(knee, higher, ttftKey, rateMode))
    if (steps.some((step) => step === null || isMeaningfulGain(step))) continue
    const ratios = steps.map((step) => step?.ttft_ratio ?? 0)
    const climb = Math.max(...ratios)
    if (climb < MIN_TTFT_RATIO) continue
    // The server's own gauges say the streams added past k were all running, none waiting: its
    // throughput grows slowly (a CPU engine sharing one core among its slots), but it is not full.
    if (!rateMode && ranEveryStream(held[k + 1] as ScalingFigures)) {
      admittedFrom ??= knee.value
      continue
    }
    const below = k > 0 ? scalingStep(held[k - 1] as ScalingFigures, knee, ttftKey, rateMode) : null
    const next = steps[0] as ScalingStep
    const uncertain = below !== null && !isMeaningfulGain(below)
    const admitted =
      admittedFrom === null
        ? ''
        : `; throughput grew little from ${admittedFrom}, but up to ${knee.value} the server ran every stream it was sent (none waited)`
    return {
      value: knee.value,
      mode,
      reason:
        kneeReason(next, steps as ScalingStep[], climb, ratios.indexOf(climb), below, ttftKey) + admitted,
      bracket: uncertain ? [below.from, knee.value] : [knee.value, next.to],
    }
  }
  if (fall > 0) {
    const a = sorted[fall - 1] as ScalingFigures
    const b = sorted[fall] as ScalingFigures
    const step = scalingStep(a, b, ttftKey, rateMode)
    const throughput =
      step === null ? '' : `throughput ${signedPercent(step.gain)} from ${a.value} to ${b.value} `
    return {
      value: a.value,
      mode,
      reason: `${throughput}while success rate fell from ${percent(a.success_rate)} to ${percent(b.success_rate)}`,
      bracket: [a.value, b.value],
    }
  }
  return null
}

/**
 * "throughput +0% from 16 to 32, at most +0% up to 64, while TTFT p95 x32.5 (x95.5 by 64); up to 16:
 * +56% per doubling from 8": the step past the knee, the best any higher level did, what TTFT paid,
 * and how the gradient climbed into the knee.
 */
function kneeReason(
  next: ScalingStep,
  steps: readonly ScalingStep[],
  climb: number,
  climbAt: number,
  below: ScalingStep | null,
  ttftKey: string,
): string {
  const perDoubling = perDoublingText(next)
  const last = steps.at(-1) as ScalingStep
  const best = Math.max(...steps.map((step) => step.gain))
  const beyond = last.to === next.to ? '' : `, at most ${signedPercent(best)} up to ${last.to},`
  const ttftTo = (steps[climbAt] as ScalingStep).to
  const ttft =
    next.ttft_ratio === null
      ? `TTFT ${ttftKey} x${climb.toFixed(1)} by ${ttftTo}`
      : `TTFT ${ttftKey} x${next.ttft_ratio.toFixed(1)}${ttftTo === next.to ? '' : ` (x${climb.toFixed(1)} by ${ttftTo})`}`
  const before =
    below === null
      ? ''
      : `; up to ${next.from}: ${signedPercent(below.gain_per_doubling)} per doubling from ${below.from}`
  return `throughput ${signedPercent(next.gain)} from ${next.from} to ${next.to}${perDoubling}${beyond} while ${ttft}${before}`
}

/** Fewer requests than this waited on average (in flight minus running): the server ran every stream. */
const NONE_WAITED = 0.5

/**
 * Whether the server's running gauge shows it ran every request the level had in flight (fewer than
 * NONE_WAITED waiting before or in the engine on average); false when it has no such gauge.
 */
function ranEveryStream(level: ScalingFigures): boolean {
  const running = level.server?.running?.mean
  const inFlight = level.achieved_concurrency?.mean
  if (running == null || inFlight === undefined) return false
  return inFlight - running < NONE_WAITED
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}
