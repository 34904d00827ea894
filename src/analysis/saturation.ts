import type { LoadMode } from '../metrics/summarize.js'
import type { KneeCause } from './knee-cause.js'
import {
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
   * level below and the knee when the step into it was unclear. Where to add a level (or bisect
   * with --refine) to place it. Absent in results of older versions.
   */
  bracket?: [number, number] | null
  /**
   * `clear` when the evidence places the knee in its bracket beyond noise (the server's own gauges,
   * or a throughput step whose interval is flat); `uncertain` when a step beside it could be read
   * either way: the knee is somewhere in the bracket. Absent in results of older versions.
   */
  confidence?: 'clear' | 'uncertain'
  /** The first level at which the server's gauges showed it full (at capacity, requests waiting); absent when none did. */
  full_from?: number
  /** Why the knee is there, from the server's figures at and past it (see knee-cause.ts); absent in older results. */
  cause?: KneeCause
  /** Why the knee may not be where it is (the environment drifted during the run: drift.ts); absent when nothing says so. */
  uncertain?: string
}

/** Below this success rate, a falling success rate ends the levels the knee is looked for in. */
const HELD_SUCCESS_RATE = 0.99

/**
 * The knee of the gradient, from two kinds of evidence (docs/figures.md, "The knee"):
 *
 * - **The throughput curve**: the lowest level k past which no higher level gains throughput beyond
 *   noise (no step from k is `gains` on its interval) while latency at some higher level grew beyond
 *   noise. Judged against every higher level, not only the next, so a weak step that later levels
 *   make up for is not a knee.
 * - **The server's own gauges** (concurrency mode, where it exposes a running gauge): the level
 *   below the first one where the server ran at its capacity (declared slots, or the most it ever
 *   ran) with requests waiting. That is direct evidence, so it wins where the two disagree, and the
 *   reason says how: a throughput knee below it is a slowly scaling engine (it still ran every
 *   stream it was sent), one above it is a curve the streams' lockstep or batching bent.
 *
 * Only levels up to the first lasting fall of the success rate (below 99% at every higher level)
 * are searched; when none of them is a knee, the last level that held is. Returns null when neither
 * kind of evidence places a knee: see kneeUndecided for whether the figures could not tell.
 */
export function findSaturation(
  levels: readonly ScalingFigures[],
  ttftKey = 'p95',
  rateMode = false,
  slots: number | null = null,
): Saturation | null {
  const sorted = [...levels].sort((x, y) => x.value - y.value)
  const mode: LoadMode = rateMode ? 'request_rate' : 'concurrency'
  const fall = lastingFall(sorted)
  // The first level whose success rate fell still shows whether throughput grew up to it; none beyond.
  const held = fall > 0 ? sorted.slice(0, fall + 1) : sorted
  const curve = throughputKnee(held, ttftKey, rateMode)
  const server = rateMode ? null : serverKnee(held, slots, curve)
  if (server !== null) return { mode, ...combine(server, curve, held, ttftKey, rateMode) }
  if (curve !== null) return { mode, ...curve, reason: curve.reason + computeBound(held, curve.value) }
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
      confidence: 'clear',
    }
  }
  return null
}

type Knee = Omit<Saturation, 'mode' | 'cause'>

/** The index of a fall of the success rate that lasts (no level from it on holds again); -1 when none. */
function lastingFall(sorted: readonly ScalingFigures[]): number {
  // One failed request at a low level of a healthy server (a blip) must not end the search there.
  return sorted.findIndex(
    (b, i) =>
      i > 0 &&
      b.success_rate < (sorted[i - 1] as ScalingFigures).success_rate &&
      sorted.slice(i).every((later) => later.success_rate < HELD_SUCCESS_RATE),
  )
}

/** The knee the throughput curve alone places (see findSaturation); null when it places none. */
function throughputKnee(held: readonly ScalingFigures[], ttftKey: string, rateMode: boolean): Knee | null {
  for (let k = 0; k < held.length - 1; k++) {
    const knee = held[k] as ScalingFigures
    const steps = held.slice(k + 1).map((higher) => scalingStep(knee, higher, ttftKey, rateMode))
    if (steps.some((step) => step === null || step.throughput === 'gains')) continue
    const paid = steps as ScalingStep[]
    if (!paid.some((step) => step.latency_grew)) continue
    const next = paid[0] as ScalingStep
    const below = k > 0 ? scalingStep(held[k - 1] as ScalingFigures, knee, ttftKey, rateMode) : null
    const into = below !== null && below.throughput !== 'gains'
    return {
      value: knee.value,
      reason: kneeReason(next, paid, below, ttftKey),
      bracket: into ? [below.from, knee.value] : [knee.value, next.to],
      confidence: into || next.throughput === 'unclear' ? 'uncertain' : 'clear',
    }
  }
  return null
}

/** Fewer requests than this waited on average (in flight minus running): the server ran every stream. */
const NONE_WAITED = 0.5

/** Where the server's gauges put the knee: the first level where it ran full with requests waiting. */
interface ServerKnee {
  /** The level below the first full one (the first level itself when it was full already). */
  value: number
  /** The first level where the server ran at capacity with requests waiting. */
  full: ScalingFigures
  capacity: number
  /** Whether the capacity is the server's declared slots (else the most it ran in the gradient). */
  declared: boolean
}

/**
 * The server's own saturation: the first level at which it ran at its capacity (the declared
 * slots, else the most it ran at any level) while requests waited in or before the engine (the
 * streams in flight beyond those running, or its waiting gauge). Null without a running gauge or
 * when no level was full.
 */
function serverKnee(
  held: readonly ScalingFigures[],
  slots: number | null,
  curve: Knee | null,
): ServerKnee | null {
  const ran = held.map((level) => level.server?.running?.max).filter((max) => max != null)
  if (ran.length === 0) return null
  const capacity = slots ?? Math.max(...(ran as number[]))
  if (!(capacity > 0)) return null
  const fullAt = held.findIndex((level) => ranFull(level, capacity, slots !== null))
  if (fullAt < 0) return null
  const full = held[fullAt] as ScalingFigures
  // The level just below the first full one, unless the gauges did not read it: a short level can
  // fall between two scrapes, and then says nothing of the slots. When the throughput curve puts the
  // knee between the highest level the gauges read not full and that one, the curve's knee stands.
  const below = held.slice(0, fullAt)
  const seen = below.filter((level) => level.server?.running != null).at(-1)
  let value = fullAt === 0 ? full.value : (held[fullAt - 1] as ScalingFigures).value
  if (curve !== null && seen !== undefined && curve.value >= seen.value && curve.value < value)
    value = curve.value
  return { value, full, capacity, declared: slots !== null }
}

/**
 * Whether the server ran full at this level: it reached its capacity and requests waited (0.5 or
 * more on average). Against declared slots, the client's time-averaged streams in flight beyond
 * them say so (the running gauge's own mean, from a few scrapes, dips between one request's end and
 * the next one's start and would read streams in hand-over as waiting at c = slots). Against the
 * most it was seen running, a capacity a few scrapes may have caught short, it takes the server's
 * own waiting gauge where it has one, else a whole stream on average in flight beyond its running mean.
 */
export function ranFull(level: ScalingFigures, capacity: number, declared = true): boolean {
  const running = level.server?.running
  if (running == null || running.max < capacity) return false
  if (declared) return waited(level, capacity) >= NONE_WAITED
  // A server that counts its waiting requests says itself whether any waited for a slot (a CPU
  // engine's running gauge may leave out the sequences waiting for their turn to prefill).
  const waiting = level.server?.waiting?.mean
  if (waiting != null) return waiting >= NONE_WAITED
  return (level.achieved_concurrency?.mean ?? 0) - running.mean >= 1
}

/** Requests waiting on average at a server of `capacity`: its waiting gauge, or the streams in flight beyond it. */
export function waited(level: ScalingFigures, capacity: number): number {
  const inFlight = level.achieved_concurrency?.mean
  return Math.max(level.server?.waiting?.mean ?? 0, inFlight === undefined ? 0 : inFlight - capacity)
}

/**
 * "; up to 8 the server ran every stream it was sent (none waited): its compute, not its slots, is
 * the limit" when its gauges say so past a throughput knee; "" otherwise (or without a gauge).
 */
function computeBound(held: readonly ScalingFigures[], knee: number): string {
  const past = held.filter((level) => level.value > knee)
  const top = past.at(-1)
  const capacity = Math.max(...held.map((level) => level.server?.running?.max ?? 0))
  if (
    top === undefined ||
    top.server?.running == null ||
    past.some((level) => ranFull(level, capacity, false))
  )
    return ''
  return `; up to ${top.value} the server ran every stream it was sent (none waited): its compute, not its slots, is the limit`
}

/**
 * The knee from the server's gauges, told beside what the throughput curve says: agreeing, lower
 * (a slowly scaling engine that still ran every stream) or higher (lockstep or batching bent it).
 */
function combine(
  server: ServerKnee,
  curve: Knee | null,
  held: readonly ScalingFigures[],
  ttftKey: string,
  rateMode: boolean,
): Knee {
  const { full, capacity } = server
  const runningMean = full.server?.running?.mean ?? capacity
  const ofCapacity = server.declared ? `of its ${capacity} slots` : `(the most it ran at any level)`
  const gauge = `at ${full.value} the server ran ${round1(runningMean)} ${ofCapacity} with ${round1(waited(full, capacity))} waiting`
  const bracket: [number, number] = [server.value, full.value]
  const knee = { value: server.value, bracket, confidence: 'clear' as const, full_from: full.value }
  if (server.value === full.value) {
    return { ...knee, reason: `${gauge}: full from the first level` }
  }
  if (curve !== null && curve.value === server.value)
    return { ...knee, reason: `${curve.reason}; the server's gauges agree: ${gauge}` }
  const below = held.find((level) => level.value === server.value) as ScalingFigures
  const step = scalingStep(below, full, ttftKey, rateMode)
  const ttft = step?.ttft_ratio == null ? '' : ` and TTFT ${ttftKey} x${step.ttft_ratio.toFixed(1)}`
  const stepText =
    step === null ? '' : `throughput ${gainWithInterval(step)} from ${step.from} to ${step.to}${ttft}; `
  let curveText = ''
  if (curve !== null && curve.value < server.value)
    curveText = `; throughput grew little from ${curve.value}, but up to ${server.value} the server ran every stream it was sent (none waited)`
  else if (curve !== null && curve.value > full.value)
    curveText = `; the throughput curve alone would put the knee at ${curve.value}: the gain past ${full.value} came from batching requests that waited, not from free capacity`
  else if (curve !== null && curve.value === full.value)
    curveText = `; throughput grew up to ${full.value}, where requests already waited: the capacity lies between ${server.value} and ${full.value}`
  return { ...knee, reason: `${stepText}${gauge}${curveText}` }
}

/**
 * Whether the gradient's figures cannot tell a plateau from growth at its top: no knee was placed,
 * and the top step's throughput interval is `unclear`. Then "not saturated" would be a guess; the
 * answer is "no clear knee", with the step that could not tell (null when the top step gains).
 */
export function kneeUndecided(
  levels: readonly ScalingFigures[],
  ttftKey = 'p95',
  rateMode = false,
): ScalingStep | null {
  const sorted = [...levels].sort((x, y) => x.value - y.value)
  if (sorted.length < 2) return null
  const step = scalingStep(
    sorted.at(-2) as ScalingFigures,
    sorted.at(-1) as ScalingFigures,
    ttftKey,
    rateMode,
  )
  return step !== null && step.throughput !== 'gains' ? step : null
}

/** "+4% (−3…+11%)": a gain with its interval when it has one. */
export function gainWithInterval(step: ScalingStep): string {
  if (step.gain_interval === null) return signedPercent(step.gain)
  const [low, high] = step.gain_interval
  return `${signedPercent(step.gain)} (${signedPercent(low)}…${signedPercent(high)})`
}

/**
 * "throughput +0% (−4…+5%) from 16 to 32, at most +0% up to 64, while TTFT p95 x32.5; up to 16:
 * +56% per doubling from 8": the step past the knee, the best any higher level did, what latency
 * paid, and how the gradient climbed into the knee.
 */
function kneeReason(
  next: ScalingStep,
  steps: readonly ScalingStep[],
  below: ScalingStep | null,
  ttftKey: string,
): string {
  const perDoubling = perDoublingText(next)
  const last = steps.at(-1) as ScalingStep
  const best = Math.max(...steps.map((step) => step.gain))
  const beyond = last.to === next.to ? '' : `, at most ${signedPercent(best)} up to ${last.to},`
  const ratios = steps.map((step) => step.ttft_ratio ?? 0)
  const climb = Math.max(...ratios)
  const climbTo = (steps[ratios.indexOf(climb)] as ScalingStep).to
  const latency =
    climb <= 0
      ? 'latency grew'
      : next.ttft_ratio === null
        ? `TTFT ${ttftKey} x${climb.toFixed(1)} by ${climbTo}`
        : `TTFT ${ttftKey} x${next.ttft_ratio.toFixed(1)}${climbTo === next.to ? '' : ` (x${climb.toFixed(1)} by ${climbTo})`}`
  const before =
    below === null
      ? ''
      : `; up to ${next.from}: ${signedPercent(below.gain_per_doubling)} per doubling from ${below.from}`
  return `throughput ${gainWithInterval(next)} from ${next.from} to ${next.to}${perDoubling}${beyond} while ${latency}${before}`
}

function round1(value: number): string {
  return String(Math.round(value * 10) / 10)
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}
