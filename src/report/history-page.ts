import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type HistoryEntry, renderHistory } from './history.js'

/** Writes DIR/history.html (vega loads here, only when the page is asked for); returns its path. */
export async function writeHistoryHtml(dir: string, entries: readonly HistoryEntry[]): Promise<string> {
  const { HISTORY_HTML_FILE, renderHistoryHtml } = await import('./history-html.js')
  const path = join(dir, HISTORY_HTML_FILE)
  writeFileSync(path, await renderHistoryHtml(entries, renderHistory(entries)))
  return path
}
