import { levelName } from '../metrics/level-name.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { type Section, sectionHtml, sectionLines } from './session-tables.js'

/**
 * Speculative decoding under the level table, one row per level and source that saw it: the engine's
 * own word (its responses, its /metrics) and the client's cadence where it tells. Nothing when no level
 * has any: a run without speculation shows no such table.
 */
export function speculativeTable(result: BenchResult, format: 'text' | 'markdown'): string[] {
  const section = speculativeSection(result)
  return section === null ? [] : sectionLines(section, format)
}

export function speculativeTableHtml(result: BenchResult): string {
  const section = speculativeSection(result)
  return section === null ? '' : sectionHtml(section)
}

function speculativeSection(result: BenchResult): Section | null {
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const rows = levels.flatMap((level) =>
    rowsOf(level).map((row) => [levelName(result.meta, level.value), ...row]),
  )
  if (rows.length === 0) return null
  return {
    title: 'Speculative decoding (acceptance length: tokens per decode step)',
    head: [
      'level',
      'from',
      'accept len',
      'accept rate',
      'tokens per step: steps',
      'TPOT per accepted tok ms p50',
    ],
    rows,
  }
}

function rowsOf(level: LevelSummary): string[][] {
  const rows: string[][] = []
  const server = level.speculative?.server ?? null
  if (server !== null)
    rows.push([
      'engine, per request',
      fixed(server.acceptance_length),
      percent(server.acceptance_rate),
      '–',
      '–',
    ])
  const counters = level.server?.spec_decode
  if (counters !== undefined)
    rows.push([
      'engine, /metrics',
      fixed(counters.acceptance_length),
      percent(counters.acceptance_rate),
      '–',
      '–',
    ])
  const cadence = level.speculative?.cadence ?? null
  // Bursts alone do not prove speculation: on the kit at load 20, llama.cpp without a draft model
  // delivered 9.6% of its steps in bursts (writes held up by a busy host). Said beside the figure.
  const confirmed = server !== null || counters !== undefined
  if (cadence?.tells)
    rows.push([
      confirmed
        ? 'client cadence'
        : 'client cadence, unconfirmed (the engine reports no drafts; a busy host also bunches tokens)',
      fixed(cadence.acceptance_length),
      percent(cadence.draft_acceptance_rate),
      Object.entries(cadence.steps_by_tokens)
        .map(([tokens, steps]) => `${tokens}: ${steps}`)
        .join(', '),
      fixed(cadence.tpot_per_accepted_token_ms.p50 ?? null),
    ])
  return rows
}

function fixed(value: number | null): string {
  return value === null ? '–' : value.toFixed(2)
}

function percent(value: number | null): string {
  return value === null ? '–' : `${(value * 100).toFixed(1)}%`
}
