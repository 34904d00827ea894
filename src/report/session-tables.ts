import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'
import { jobTables } from './job-tables.js'

/**
 * The prefix cache's effect, under the level table: a session run's figures per turn (the prompt
 * grows with the history, the cached share with it, and TTFT shows what that bought), and, whenever
 * the server reported cache hits, TTFT p50 by the share of the prompt served from the cache.
 */
export function sessionTables(result: BenchResult, format: 'text' | 'markdown'): string[] {
  return sections(result).flatMap((section) => sectionLines(section, format))
}

/** The same tables in report.html, each under its heading; empty when the run has neither. */
export function sessionTablesHtml(result: BenchResult): string {
  return sections(result).map(sectionHtml).join('\n')
}

/** A titled table in report.html. */
export function sectionHtml(section: Section): string {
  const cell = (text: string, tag: 'th' | 'td'): string =>
    `<${tag}>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</${tag}>`
  return `<h2>${section.title}</h2><table><thead><tr>${section.head.map((h) => cell(h, 'th')).join('')}</tr></thead><tbody>${section.rows
    .map((row) => `<tr>${row.map((c) => cell(c, 'td')).join('')}</tr>`)
    .join('')}</tbody></table>`
}

/** A titled table under the level table, in the terminal or summary.md. */
export function sectionLines(section: Section, format: 'text' | 'markdown'): string[] {
  return ['', `${section.title}:`, ...table(section.head, section.rows, format)]
}

export interface Section {
  title: string
  head: string[]
  rows: string[][]
}

function sections(result: BenchResult): Section[] {
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const found: Section[] = [...jobTables(result)]
  // --tools: how many of each turn's replies called tools (their results went into the next turn).
  const tools = levels.some((level) => (level.turns ?? []).some((t) => t.tool_call_turns !== undefined))
  const turnRows = levels.flatMap((level) =>
    (level.turns ?? []).map((t) => [
      levelName(result.meta, level.value),
      String(t.turn),
      String(t.requests),
      `${one(t.ttft_p50_ms)} / ${one(t.ttft_p95_ms)}`,
      one(t.input_tokens_mean),
      one(t.cached_tokens_mean),
      t.cached_share === null ? '–' : `${(t.cached_share * 100).toFixed(1)}%`,
      ...(tools ? [String(t.tool_call_turns ?? 0)] : []),
    ]),
  )
  if (turnRows.length > 0)
    found.push({
      title: `${result.meta.workload.jobs === undefined ? 'Sessions' : 'Jobs'}, per turn (prompt tokens as the server counted them)`,
      head: [
        'level',
        'turn',
        'requests',
        'TTFT ms p50 / p95',
        'input tok',
        'cached tok',
        'cached',
        ...(tools ? ['tool calls'] : []),
      ],
      rows: turnRows,
    })
  const effectRows = levels.flatMap((level) =>
    (level.cache_effect ?? [])
      .filter((bucket) => bucket.requests > 0)
      .map((bucket) => [
        levelName(result.meta, level.value),
        `${Math.round(bucket.from * 100)}–${Math.round(bucket.to * 100)}%`,
        String(bucket.requests),
        one(bucket.ttft_p50_ms),
        one(bucket.uncached_tokens_mean),
      ]),
  )
  // Only where something was cached: every request in the lowest quarter (a llama.cpp run reusing a
  // few template tokens) compares nothing with nothing.
  const cachedSome = levels.some((level) =>
    (level.cache_effect ?? []).some((bucket) => bucket.requests > 0 && bucket.from > 0),
  )
  if (effectRows.length > 0 && cachedSome)
    found.push({
      title: 'TTFT against the cached share of the prompt',
      head: ['level', 'cached share', 'requests', 'TTFT ms p50', 'uncached tok'],
      rows: effectRows,
    })
  return found
}

function one(value: number | null): string {
  return value === null ? '–' : String(Math.round(value))
}

function table(head: string[], rows: string[][], format: 'text' | 'markdown'): string[] {
  if (format === 'markdown')
    return [
      `| ${head.join(' | ')} |`,
      `|${' --- |'.repeat(head.length)}`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ]
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)))
  const line = (cells: string[]): string =>
    `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ')}`.trimEnd()
  return [line(head), ...rows.map(line)]
}
