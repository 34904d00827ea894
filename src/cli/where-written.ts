import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { HTML_FILE, runFiles } from '../result/folder-layout.js'

/**
 * The last lines after a table: where report.html is (the page to open), then the folder and what it
 * holds. Only files that exist are named: a report that could not be drawn is not pointed at.
 */
export function whereWritten(dir: string, resultFile: string, verb = 'Results'): string[] {
  const present = runFiles(resultFile).filter((name) => existsSync(join(dir, name)))
  const lines: string[] = []
  if (present.includes(HTML_FILE)) lines.push(`Report: ${join(dir, HTML_FILE)}`)
  lines.push(`${verb}: ${dir}${present.length === 0 ? '' : ` (${present.join(', ')})`}`)
  return lines
}
