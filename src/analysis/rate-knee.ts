import type { LevelSummary } from '../metrics/summarize.js'
import { openLoopOverloaded, openLoopShortfall } from './open-loop.js'
import type { Saturation } from './saturation.js'

/**
 * Request-rate mode: the knee and the open loop's own evidence (the server kept up or fell behind)
 * must tell one story. A run called 8/s its capacity while its own figures said 8/s could not be
 * kept up with, and another called 2/s "overloaded" on a 9 s window while 8/s and 32/s kept up
 * (issue 36). Pure functions of the level summaries.
 */

type RateLevel = Pick<LevelSummary, 'value' | 'open_loop'>

/**
 * The rates whose shortfall a higher rate contradicts: a level that fell behind below one that kept
 * up says more about its own short window than about the server. Their verdicts are judged without
 * the open loop's shortfall.
 */
export function contradictedShortfalls(levels: readonly RateLevel[]): Set<number> {
  const keptUp = levels.filter((level) => level.open_loop != null && !openLoopOverloaded(level))
  const highestKeptUp = Math.max(...keptUp.map((level) => level.value))
  return new Set(
    levels
      .filter((level) => openLoopOverloaded(level) && level.value < highestKeptUp)
      .map((level) => level.value),
  )
}

/**
 * The knee moved below a rate the server could not keep up with: the capacity is then between the
 * highest rate below it that was kept up with and the knee's own rate (uncertain, bracketed). The
 * knee as it was when it kept up; null when no rate below it kept up (nothing to call capacity).
 */
export function kneeKeptUp(
  saturation: Saturation | null,
  levels: readonly RateLevel[],
  contradicted: ReadonlySet<number>,
): Saturation | null {
  if (saturation === null) return null
  const at = levels.find((level) => level.value === saturation.value)
  if (at === undefined || contradicted.has(at.value) || !openLoopOverloaded(at)) return saturation
  const below = levels
    .filter(
      (level) =>
        level.value < saturation.value && (contradicted.has(level.value) || !openLoopOverloaded(level)),
    )
    .reduce<RateLevel | null>(
      (best, level) => (best === null || level.value > best.value ? level : best),
      null,
    )
  if (below === null) return null
  return {
    ...saturation,
    value: below.value,
    confidence: 'uncertain',
    bracket: [below.value, saturation.value],
    reason:
      `${saturation.reason}; but at ${saturation.value} the server could not keep up (${openLoopShortfall(at)}): ` +
      `the capacity lies between ${below.value} and ${saturation.value}`,
  }
}
