import type { LevelSummary } from '../metrics/summarize.js'

type Level = Pick<LevelSummary, 'value' | 'requests' | 'success_rate' | 'verdict'> &
  Partial<Pick<LevelSummary, 'misconfiguration'>>

const byLevelValue = (levels: readonly Level[]): Level[] => [...levels].sort((a, b) => a.value - b.value)

/**
 * Why a run measured nothing trustworthy, one sentence per reason; empty when its figures stand.
 * A level that failed for reasons that are not load fails the run wherever it is; a low success
 * rate only at the lowest level does, because failures that start higher up the ladder after
 * healthy levels are the overload the gradient is there to find.
 */
export function runFailures(
  levels: readonly Level[],
  minSuccessRatePercent: number,
  name: (value: number) => string,
): string[] {
  const reasons: string[] = []
  for (const level of byLevelValue(levels)) {
    const cause = level.misconfiguration
    if (level.verdict === 'misconfigured' && cause != null)
      reasons.push(`${name(level.value)} is misconfigured: ${cause.cause}: ${cause.message}`)
  }
  const lowest = byLevelValue(levels).find((level) => level.requests > 0)
  if (lowest !== undefined && lowest.success_rate * 100 < minSuccessRatePercent) {
    reasons.push(
      `the lowest level (${name(lowest.value)}) succeeded on ${(lowest.success_rate * 100).toFixed(1)}% of its requests, ` +
        `below --min-success-rate ${minSuccessRatePercent}%`,
    )
  }
  return reasons
}

/**
 * In place of the saturation sentence when a level is misconfigured: a knee found among refused
 * requests, or "keep adding concurrency", would be advice about a measurement that did not happen.
 */
export function misconfiguredSummary(
  levels: readonly Level[],
  name: (value: number) => string,
): string | null {
  const bad = byLevelValue(levels).filter((level) => level.verdict === 'misconfigured')
  if (bad.length === 0) return null
  return (
    `none: ${bad.map((level) => name(level.value)).join(', ')} failed for reasons that are not load ` +
    '(misconfigured), so the gradient says nothing about capacity: fix the set-up and re-run'
  )
}

/** A misconfigured level's advice: the cause, how many requests show it, and what to change. */
export function misconfiguredAdvice(level: Level): string | null {
  const found = level.misconfiguration
  if (found == null) return null
  // A failure's own words are listed with the level's messages; an empty level's are the sentence itself.
  const detail = found.cause === 'no output tokens' ? `: ${found.message}` : ''
  return `${found.cause} (${found.requests} of ${level.requests} requests)${detail}: ${found.hint}`
}
