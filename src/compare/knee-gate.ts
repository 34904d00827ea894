import type { Saturation } from '../analysis/saturation.js'

/** Where a run placed its knee: the level, and the two levels tried it lies between. */
export interface KneePlace {
  /** The knee level; null when the run found none (not saturated up to its top level). */
  value: number | null
  /** Low and high end; a high end of null is "beyond the top level tried". */
  bracket: [number, number | null]
}

export interface KneeComparison {
  base: KneePlace
  new: KneePlace
  /**
   * How far below the base bracket's low end the new bracket's high end may fall before it is a
   * regression, as a share of that low end (0 = any fall past both brackets); null = not gated.
   */
  threshold: number | null
  /** The brackets overlap (no change), or one lies wholly below the other. */
  moved: 'down' | 'up' | 'none'
  regressed: boolean
}

/** A run's knee with its bracket; an older result without a bracket brackets the knee by itself. */
export function kneePlace(saturation: Saturation | null, topLevel: number): KneePlace {
  if (saturation === null) return { value: null, bracket: [topLevel, null] }
  const [low, high] = saturation.bracket ?? [saturation.value, saturation.value]
  return { value: saturation.value, bracket: [Math.min(low, high), Math.max(low, high)] }
}

/**
 * The knee as a gate item, on its bracket: each run's knee is only known to lie within its bracket,
 * so overlapping brackets are no change, and a knee moved down only when the new bracket lies wholly
 * below the base one (by more than `threshold` of the base's low end).
 */
export function compareKnees(base: KneePlace, next: KneePlace, threshold: number | null): KneeComparison {
  const above = (upper: KneePlace, lower: KneePlace): boolean =>
    lower.bracket[1] !== null && lower.bracket[1] < upper.bracket[0]
  const moved = above(base, next) ? 'down' : above(next, base) ? 'up' : 'none'
  const fell = next.bracket[1] !== null && next.bracket[1] < base.bracket[0] * (1 - (threshold ?? 0))
  return { base, new: next, threshold, moved, regressed: threshold !== null && moved === 'down' && fell }
}
