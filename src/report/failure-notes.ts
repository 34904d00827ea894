import type { LevelSummary } from '../metrics/summarize.js'

/** A level's most frequent failure messages with their counts: "8× HTTP 400: the request exceeds ...". */
export function errorMessageLines(level: Pick<LevelSummary, 'error_messages'>): string[] {
  // Results written before the counts existed have no error_messages.
  return (level.error_messages ?? []).map(
    (entry) => `${entry.count}× ${entry.message}${entry.numbers_vary ? ' (its figures vary)' : ''}`,
  )
}
