import type { LevelShare } from './level-share.js'
import { splitProportionally } from './split.js'

/**
 * A level of a run with several targets (endpoint × model pairs, ./target-split.ts) as one share per
 * target, each then dealt over the threads as any level is (level-share.ts shareOf).
 *
 * Closed loop: the streams are split by weight (largest remainder), and each target keeps its own
 * streams for the whole level. An endpoint's level is then its own fixed concurrency, c·w/Σw rounded,
 * whatever the other endpoints' speed: split by request instead, a slower endpoint would hold more of
 * the c streams (each of its requests lasts longer), and its figures would be measured at a load no
 * one chose. The price: at a level of fewer streams than targets some targets get none.
 *
 * Open loop: every arrival goes to the target the smooth weighted cycle names for it, so each target
 * sees its share of the rate, interleaved; the in-flight bound is split by weight, at least one each.
 */

export interface TargetWeights {
  /** One per target, positive whole numbers. */
  weights: readonly number[]
  /** The smooth weighted round-robin over the weights, Σw long (target-split.ts planTargetSplit). */
  cycle: readonly number[]
  /** Where arrival 0 falls in the cycle. */
  offset: number
}

/** The streams (closed) or the in-flight bound (open) each target gets of a level of `total`. */
export function targetStreams(total: number, weights: readonly number[]): number[] {
  return splitProportionally(total, weights)
}

/** The split with every weight but target t's at zero: the whole level goes to t (a --paired block). */
export function onlyTarget(split: TargetWeights, t: number): TargetWeights {
  return { ...split, weights: split.weights.map((_, i) => (i === t ? 1 : 0)), cycle: [t], offset: 0 }
}

/**
 * The shares of every target of a level: by weight; the whole level to one target (a --paired block);
 * or the whole level to each target at once (--paired-mode together: each target's copy is the
 * level, its streams, its requests and its warm-up, as if it were alone).
 */
export function sharesByTarget(level: LevelShare, split: TargetWeights): LevelShare[] {
  const { target } = level
  if (target === undefined) return targetShares(level, split)
  if (target !== 'each') return targetShares(level, onlyTarget(split, target))
  return split.weights.map((_, t) => targetShares(level, onlyTarget(split, t))[t] as LevelShare)
}

/** Target t's share of `level`; a target with no stream is given a closed share of none. */
export function targetShares(level: LevelShare, split: TargetWeights): LevelShare[] {
  const { weights } = split
  const { load } = level
  if (load.kind === 'closed') {
    const streams = targetStreams(load.concurrency, weights)
    const requests = load.requests === null ? null : splitProportionally(load.requests, streams)
    const warmups = splitProportionally(level.warmup, streams)
    const offsets = load.startOffsets === undefined ? null : dealStreams(load.startOffsets, streams)
    return streams.map((concurrency, t) => ({
      ...level,
      warmup: warmups[t] as number,
      load: {
        kind: 'closed',
        concurrency,
        requests: requests === null ? null : (requests[t] as number),
        ...(offsets === null ? {} : { startOffsets: offsets[t] as Float64Array }),
      },
    }))
  }
  const owner = (n: number): number => split.cycle[(n + split.offset) % split.cycle.length] as number
  const counts = weights.map(() => 0)
  for (let n = 0; n < load.offsets.length; n++) counts[owner(n)] = (counts[owner(n)] as number) + 1
  const offsets = counts.map((count) => new Float64Array(count))
  const promptIds = load.promptIds === undefined ? null : counts.map((count) => new Float64Array(count))
  const filled = weights.map(() => 0)
  for (let n = 0; n < load.offsets.length; n++) {
    const t = owner(n)
    const at = filled[t] as number
    filled[t] = at + 1
    ;(offsets[t] as Float64Array)[at] = load.offsets[n] as number
    if (promptIds !== null) (promptIds[t] as Float64Array)[at] = load.promptIds?.[n] as number
  }
  const bounds = splitProportionally(load.maxInFlight, weights).map((bound) => Math.max(1, bound))
  const warmups = splitProportionally(level.warmup, weights)
  return weights.map((_, t) => ({
    ...level,
    warmup: warmups[t] as number,
    load: {
      kind: 'open',
      offsets: offsets[t] as Float64Array,
      maxInFlight: bounds[t] as number,
      timeoutMs: load.timeoutMs,
      ...(promptIds === null ? {} : { promptIds: promptIds[t] as Float64Array }),
    },
  }))
}

/**
 * Staggered first sends, one per stream, dealt to the targets in turn (skipping a target whose
 * streams are all dealt), so every target's streams start spread over the stagger, not one target first.
 */
function dealStreams(startOffsets: Float64Array, streams: readonly number[]): Float64Array[] {
  const dealt = streams.map((count) => new Float64Array(count))
  const filled = streams.map(() => 0)
  let t = 0
  for (let i = 0; i < startOffsets.length; i++) {
    while ((filled[t] as number) >= (streams[t] as number)) t = (t + 1) % streams.length
    const at = filled[t] as number
    ;(dealt[t] as Float64Array)[at] = startOffsets[i] as number
    filled[t] = at + 1
    t = (t + 1) % streams.length
  }
  return dealt
}
