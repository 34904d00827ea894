import type { LevelSummary } from '../metrics/summarize.js'

type Level = Pick<LevelSummary, 'error_messages'> &
  Partial<Pick<LevelSummary, 'non_load_failures' | 'misconfiguration'>>

/**
 * A level's most frequent failure messages with their counts: "8× HTTP 400: the request exceeds ...",
 * then, at a level that is not misconfigured (whose advice says it already), what its failures that
 * are not load were and what to change: they are not counted against the level's health.
 */
export function errorMessageLines(level: Level): string[] {
  // Results written before the counts existed have no error_messages.
  const lines = (level.error_messages ?? []).map(
    (entry) => `${entry.count}× ${entry.message}${entry.numbers_vary ? ' (its figures vary)' : ''}`,
  )
  const nonLoad = level.non_load_failures
  if (nonLoad != null && level.misconfiguration == null) {
    lines.push(
      `${nonLoad.requests} request(s) failed for reasons that are not load, not counted against the level: ` +
        `${nonLoad.cause}: ${nonLoad.hint}`,
    )
  }
  return lines
}
