import Table from 'cli-table3'
import { answerLines } from '../analysis/answer.js'
import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'
import { achievedNotes } from './achieved-cells.js'
import { driftLine } from './drift-line.js'
import { errorMessageLines } from './failure-notes.js'
import { fitColumns } from './fit-columns.js'
import { GroupedLines } from './grouped-lines.js'
import { kneeCauseLine } from './knee-cause-line.js'
import { type LevelColumn, levelColumns } from './level-columns.js'
import { sessionTables } from './session-tables.js'
import { intervalLegend, SMALL_SAMPLE_MARK, showsInterval, smallSampleLegend } from './small-samples.js'
import { speculativeTable } from './speculative-table.js'
import { workloadNotes } from './workload-notes.js'

/** How wide the table may be: absent = every column (what a file or `--wide` gets). */
export interface TableOptions {
  /** Characters available; columns are chosen by priority to fit (see fit-columns.ts). */
  width?: number
}

/**
 * The end-of-run table: concurrency vs TTFT / TPOT / throughput / success rate, plus the verdict;
 * with a width, the columns that fit (the level, req, success, TTFT, TPOT, verdict, tok/s, E2E
 * first) and one line naming the rest. A percentile from too few samples carries its interval (a mark
 * in results without intervals, or where the intervals would crowd out a column) and a legend.
 */
export function renderTable(result: BenchResult, options: TableOptions = {}): string {
  // A tail's interval widens its column (`1440 (≥1431)`): where that would leave out a column the
  // marked tails leave room for (the verdict, in a 100-column pipe), the marks are kept and --wide
  // shows the intervals.
  let fitted = fitTable(result, options.width, false)
  if (options.width !== undefined) {
    const marked = fitTable(result, options.width, true)
    if (marked.shown.length > fitted.shown.length) fitted = marked
  }
  const { columns, rows, shown, omitted } = fitted
  const table = new Table({
    head: shown.map((i) => (columns[i] as LevelColumn).head),
    // No colour codes: the table must read the same in a pipe or a CI log.
    style: { head: [], border: [] },
    // One line per level: no rule between rows.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  })
  for (const row of rows) table.push(shown.map((i) => row[i] as string))
  const lines = [table.toString()]
  if (shown.some((i) => rows.some((row) => (row[i] as string).includes(SMALL_SAMPLE_MARK))))
    lines.push(
      smallSampleLegend(
        result.meta.percentiles,
        result.levels.some((level) => level.intervals != null),
      ),
    )
  if (shown.some((i) => rows.some((row) => showsInterval(row[i] as string))))
    lines.push(intervalLegend(result.meta.percentiles))
  if (omitted.length > 0) lines.push(`--wide for: ${omitted.join(', ')}`)
  return lines.join('\n')
}

/** The table's columns and cells, and those that fit `width` (all without one). */
function fitTable(result: BenchResult, width: number | undefined, markTails: boolean) {
  const columns = levelColumns(result, 'terminal', { markTails })
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const rows = levels.map((level) => columns.map((column) => column.cell(level)))
  const { shown, omitted } =
    width === undefined
      ? { shown: columns.map((_, i) => i), omitted: [] as string[] }
      : fitColumns(
          columns.map((column, i) => ({
            name: column.name,
            priority: column.priority,
            texts: [column.head, ...rows.map((row) => row[i] as string)],
          })),
          width,
        )
  return { columns, rows, shown, omitted }
}

/**
 * The lines under the table: saturation point, failures and what to do about each verdict.
 * `calibrationSaid`: the run printed the calibration line as it happened; not said twice.
 */
export function renderVerdict(result: BenchResult, options: { calibrationSaid?: boolean } = {}): string {
  const why = kneeCauseLine(result)
  const drift = driftLine(result)
  // The answer first, worded as report.html's headline.
  const { headline, detail, repeats, search, targets } = answerLines(result)
  const lines = [
    ...(headline === null ? [] : [headline]),
    ...(detail === null ? [] : [`  ${detail}`]),
    ...(repeats === null ? [] : [`  ${repeats}`]),
    ...(search === null ? [] : [`  ${search}`]),
    `Saturation: ${result.saturation_summary}`,
    ...(why === null ? [] : [`  ${why}`]),
    ...(targets.length === 0 ? [] : ['Each target on its own load:', ...targets.map((line) => `  ${line}`)]),
    ...(drift === null ? [] : [drift]),
  ]
  const name = (value: number): string => levelName(result.meta, value)
  // Said once for all the levels it applies to: errors repeat the same lines at every level.
  const failures: string[] = []
  const messages = new GroupedLines()
  const verdicts = new GroupedLines()
  for (const level of result.levels) {
    const at = name(level.value)
    if (level.failed > 0) {
      const classes = Object.entries(level.errors)
        .filter(([, count]) => count > 0)
        .map(([name, count]) => `${name} ${count}`)
        .join(', ')
      failures.push(`${at} ${level.failed} (${classes})`)
      for (const entry of level.error_messages ?? [])
        messages.add(at, `${entry.message}${entry.numbers_vary ? ' (its figures vary)' : ''}`, entry.count)
      for (const line of errorMessageLines({ ...level, error_messages: [] })) messages.add(at, line)
    }
    if (level.verdict !== 'healthy' || result.saturation?.value === level.value)
      verdicts.add(at, `${level.verdict}: ${level.advice}`)
    if (level.client.bound)
      verdicts.add(
        at,
        `the CLIENT was the bottleneck (${level.client.reasons.join('; ')}): ` +
          'these figures include our own queueing, not only the server',
      )
    for (const note of [...(level.notes ?? []), ...(level.client.notes ?? [])])
      verdicts.add(at, `note: ${note}`)
  }
  if (failures.length > 0) lines.push(`  failed: ${failures.join('; ')}`, ...messages.lines('      '))
  lines.push(...verdicts.lines('  '))
  lines.push(...sessionTables(result, 'text'))
  lines.push(...speculativeTable(result, 'text'))
  for (const note of achievedNotes(result)) lines.push(`  ${note}`)
  for (const note of workloadNotes(result, options)) lines.push(note.startsWith('Cost') ? note : `  ${note}`)
  for (const advice of result.advice) lines.push(`Advice: ${advice}`)
  if (result.meta.partial)
    lines.push('Partial result: the run was interrupted; levels after the last shown are missing.')
  return lines.join('\n')
}
