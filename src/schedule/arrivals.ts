import { standardNormal } from '../random.js'

/**
 * Open-loop arrival schedules: when each request of a request-rate level is meant to be sent,
 * independent of how fast the server answers. Intended times are fixed before the level starts, so
 * a request the client could not send on time is measured from when it should have gone
 * (coordinated omission), never silently re-timed.
 */
export type ArrivalProcess = 'constant' | 'poisson' | 'gamma'

export const ARRIVAL_PROCESSES: readonly ArrivalProcess[] = ['constant', 'poisson', 'gamma']

export interface ArrivalPlan {
  /** Mean requests per second. */
  rate: number
  process: ArrivalProcess
  /**
   * Gamma shape k: the squared coefficient of variation of the gaps is 1/k, so k < 1 is burstier
   * than Poisson, k = 1 is Poisson and k > 1 is smoother. Ignored by the other processes.
   */
  burstiness: number
}

/**
 * Intended send offsets in ms from the level's start: `count` of them, or every arrival before
 * `durationMs`. The first arrival is at 0 for `constant` and one random gap in for the others.
 */
export function arrivalOffsets(
  plan: ArrivalPlan,
  random: () => number,
  bound: { count: number } | { durationMs: number },
): Float64Array {
  const meanGapMs = 1000 / plan.rate
  const gap = gapSampler(plan, meanGapMs, random)
  const limit = 'count' in bound ? bound.count : Math.ceil((bound.durationMs / meanGapMs) * 3 + 16)
  const offsets: number[] = []
  let at = plan.process === 'constant' ? 0 : gap()
  while (offsets.length < limit) {
    if ('durationMs' in bound && at >= bound.durationMs) break
    offsets.push(at)
    at += gap()
  }
  return Float64Array.from(offsets)
}

function gapSampler(plan: ArrivalPlan, meanGapMs: number, random: () => number): () => number {
  switch (plan.process) {
    case 'constant':
      return () => meanGapMs
    case 'poisson':
      // Exponential gaps: -ln(U) * mean, U in (0, 1].
      return () => -Math.log(1 - random()) * meanGapMs
    case 'gamma': {
      const shape = plan.burstiness
      const scale = meanGapMs / shape
      return () => gammaDraw(shape, random) * scale
    }
  }
}

/**
 * One Gamma(shape, 1) draw (Marsaglia and Tsang, 2000); shapes below 1 use the boost
 * Gamma(k) = Gamma(k + 1) * U^(1/k).
 */
export function gammaDraw(shape: number, random: () => number): number {
  if (shape < 1) return gammaDraw(shape + 1, random) * (1 - random()) ** (1 / shape)
  const d = shape - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (let attempt = 0; attempt < 1000; attempt++) {
    const x = standardNormal(random)
    const v0 = 1 + c * x
    if (v0 <= 0) continue
    const v = v0 * v0 * v0
    const u = 1 - random()
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v
  }
  return shape // unreachable in practice: the acceptance rate is above 95%
}

/** Deals a schedule round-robin over `parts` workers: the superposition is exactly the schedule. */
export function dealArrivals(offsets: Float64Array, parts: number): Float64Array[] {
  return Array.from({ length: parts }, (_, part) => dealtArrivals(offsets, part, parts))
}

/** Part `part` of `parts` of a schedule dealt round-robin: arrivals part, part + parts, ... in order. */
export function dealtArrivals(offsets: Float64Array, part: number, parts: number): Float64Array {
  const share = new Float64Array(Math.floor(offsets.length / parts) + (part < offsets.length % parts ? 1 : 0))
  for (let i = 0; i < share.length; i++) share[i] = offsets[part + i * parts] as number
  return share
}
