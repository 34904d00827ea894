import Table from 'cli-table3'
import type { Distribution } from '../metrics/distribution.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { levelName } from '../result/level-name.js'
import { achievedNotes, levelCell, throughputCell } from './achieved-cells.js'
import { errorMessageLines } from './failure-notes.js'
import { kneeCauseLine } from './knee-cause-line.js'
import { reasoningColumns } from './reasoning-cells.js'
import { type ServerColumn, serverColumns } from './server-cells.js'
import { sessionTables } from './session-tables.js'
import { levelHeading, workloadNotes } from './workload-notes.js'

/** The end-of-run table: concurrency vs TTFT / TPOT / throughput / success rate, plus the verdict. */
export function renderTable(result: BenchResult): string {
  const keys = result.meta.percentiles.map((p) => `p${p}`)
  const rateMode = result.meta.load.mode === 'request_rate'
  const server = [...serverColumns(result), ...reasoningColumns(result)]
  const table = new Table({
    head: [
      levelHeading(result.meta),
      'req',
      'success',
      `TTFT ms\n${keys.join('/')}`,
      ...(rateMode ? [`TTFT ms from\nintended ${keys.join('/')}`] : []),
      `TPOT ms\n${keys.join('/')}`,
      'ITL ms\np50',
      'E2E ms\np50',
      'output\ntok/s',
      'req/s',
      ...server.map((column) => column.head),
      'client\nloop busy / p99',
      'verdict',
    ],
    // No colour codes: the table must read the same in a pipe or a CI log.
    style: { head: [], border: [] },
    // One line per level: no rule between rows.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  })
  for (const level of [...result.levels].sort((a, b) => a.value - b.value))
    table.push(levelRow(level, keys, rateMode, server))
  return table.toString()
}

function levelRow(level: LevelSummary, keys: string[], rateMode: boolean, server: ServerColumn[]): string[] {
  return [
    levelCell(level, rateMode),
    String(level.requests),
    `${(level.success_rate * 100).toFixed(1)}%`,
    figures(level.ttft_ms, keys),
    ...(rateMode
      ? [level.ttft_ms_from_intended === null ? '-' : figures(level.ttft_ms_from_intended, keys)]
      : []),
    figures(level.tpot_ms, keys, 1),
    one(level.itl_ms.p50, 1),
    one(level.e2e_ms.p50),
    throughputCell(level),
    level.requests_per_s.toFixed(2),
    ...server.map((column) => column.cell(level)),
    `${Math.round(level.client.event_loop_utilization * 100)}% / ${level.client.event_loop_delay_p99_ms.toFixed(1)} ms`,
    level.verdict,
  ]
}

function figures(distribution: Distribution, keys: string[], digits = 0): string {
  return keys.map((key) => one(distribution[key], digits)).join(' / ')
}

function one(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined ? '-' : value.toFixed(digits)
}

/** The lines under the table: saturation point, failures and what to do about each verdict. */
export function renderVerdict(result: BenchResult): string {
  const why = kneeCauseLine(result)
  const lines = [`Saturation: ${result.saturation_summary}`, ...(why === null ? [] : [`  ${why}`])]
  const name = (value: number): string => levelName(result.meta, value)
  if (result.capacity_summary !== null) lines.push(`Capacity: ${result.capacity_summary}`)
  for (const level of result.levels) {
    if (level.failed > 0) {
      const classes = Object.entries(level.errors)
        .filter(([, count]) => count > 0)
        .map(([name, count]) => `${name} ${count}`)
        .join(', ')
      lines.push(`  ${name(level.value)}: ${level.failed} failed (${classes})`)
      for (const line of errorMessageLines(level)) lines.push(`      ${line}`)
    }
    if (level.verdict !== 'healthy' || result.saturation?.value === level.value) {
      lines.push(`  ${name(level.value)}: ${level.verdict}: ${level.advice}`)
    }
    if (level.client.bound) {
      lines.push(
        `  ${name(level.value)}: the CLIENT was the bottleneck (${level.client.reasons.join('; ')}): ` +
          'these figures include our own queueing, not only the server',
      )
    }
    for (const note of [...(level.notes ?? []), ...(level.client.notes ?? [])])
      lines.push(`  ${name(level.value)}: note: ${note}`)
  }
  lines.push(...sessionTables(result, 'text'))
  for (const note of achievedNotes(result)) lines.push(`  ${note}`)
  for (const note of workloadNotes(result)) lines.push(note.startsWith('Cost') ? note : `  ${note}`)
  for (const advice of result.advice) lines.push(`Advice: ${advice}`)
  if (result.meta.partial)
    lines.push('Partial result: the run was interrupted; levels after the last shown are missing.')
  return lines.join('\n')
}
