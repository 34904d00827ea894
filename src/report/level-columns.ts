import type { Distribution } from '../metrics/distribution.js'
import type { CellKind, ColumnSpec, FigureKey, Surface } from '../metrics/figure.js'
import { LEVEL_FIGURES } from '../metrics/figure-catalogue.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { levelCell, throughputCell } from './achieved-cells.js'
import { intervalOf, intervalText, tailIntervalText } from './interval-cells.js'
import { reasoningColumns } from './reasoning-cells.js'
import { type ServerColumn, serverColumns } from './server-cells.js'
import { SMALL_SAMPLE_MARK, tooFewSamples } from './small-samples.js'
import { levelAxisTitle, levelHeading } from './workload-notes.js'

/**
 * The per-level table's columns, derived from the figure catalogue's column declarations: the same
 * columns, in the same order, for the terminal, summary.md and report.html, each keeping only the
 * columns declared for it (and for the run's mode). A cell is text; report.html escapes it.
 */
export interface LevelColumn {
  /** Its name in the terminal's "--wide for" line. */
  name: string
  /** `\n` breaks the line in the terminal; markdown and HTML get one line. */
  head: string
  /** 0 = the first kept in a narrow terminal. */
  priority: number
  cell: (level: LevelSummary) => string
}

/** An empty figure: the terminal's dash, or the typographic one of the files. */
const DASH: Readonly<Record<Surface, string>> = { terminal: '-', markdown: '–', html: '–' }

/** The priority of the server's and the reasoning columns in a narrow terminal. */
const EXTRA_COLUMN_PRIORITY = 20

interface Declared {
  spec: ColumnSpec
  /** The figure's first field: what the cell reads. */
  key: FigureKey
}

const DECLARED: readonly Declared[] = LEVEL_FIGURES.flatMap((figure) =>
  (figure.columns ?? []).map((spec) => ({ spec, key: Object.keys(figure.fields)[0] as FigureKey })),
).sort((a, b) => a.spec.order - b.spec.order)

/** `markTails`: a tail percentile of too few samples is marked `*` even where it has an interval (a narrow terminal). */
export function levelColumns(
  result: BenchResult,
  surface: Surface,
  options: { markTails?: boolean } = {},
): LevelColumn[] {
  const rateMode = result.meta.load?.mode === 'request_rate'
  const columns: LevelColumn[] = []
  for (const { spec, key } of DECLARED) {
    if (spec.surfaces !== undefined && !spec.surfaces.includes(surface)) continue
    if (spec.mode !== undefined && spec.mode !== (result.meta.load?.mode ?? 'concurrency')) continue
    if (spec.whenPresent && !result.levels.some((level) => level[key] != null)) continue
    // An interval column only where some level has samples of its figure (embeddings have no TTFT).
    if (spec.cell.kind === 'interval' && !result.levels.some((level) => hasSamples(level, spec.cell)))
      continue
    if (spec.cell.kind === 'server-columns' || spec.cell.kind === 'reasoning-columns') {
      const extra = spec.cell.kind === 'server-columns' ? serverColumns(result) : reasoningColumns(result)
      columns.push(...extra.map((column) => extraColumn(column, surface)))
      continue
    }
    columns.push({
      name: spec.name,
      head: headOf(spec, result, surface),
      priority: spec.priority,
      cell: cellOf(spec.cell, key, surface, result, rateMode, options.markTails === true),
    })
  }
  return columns
}

function extraColumn(column: ServerColumn, surface: Surface): LevelColumn {
  return {
    name: column.head.split('\n')[0] as string,
    head: surface === 'terminal' ? column.head : column.head.replace('\n', ' '),
    priority: EXTRA_COLUMN_PRIORITY,
    cell: column.cell,
  }
}

function headOf(spec: ColumnSpec, result: BenchResult, surface: Surface): string {
  const declared = typeof spec.head === 'string' ? spec.head : spec.head[surface]
  const head = declared
    .replace('{percentiles}', result.meta.percentiles.map((p) => `p${p}`).join('/'))
    .replace('{level}', levelHead(result, surface))
    .replace('{currency}', result.cost?.currency ?? '')
  return surface === 'terminal' ? head : head.replace('\n', ' ')
}

/** What the level column counts, in each surface's words. */
function levelHead(result: BenchResult, surface: Surface): string {
  const { meta } = result
  if (surface === 'terminal') return levelHeading(meta)
  if (surface === 'html') return levelAxisTitle(meta)
  if (meta.trace != null) return 'trace speed'
  return meta.load.mode === 'request_rate' ? 'rate (req/s)' : 'concurrency'
}

function cellOf(
  cell: CellKind,
  key: FigureKey,
  surface: Surface,
  result: BenchResult,
  rateMode: boolean,
  markTails: boolean,
): (level: LevelSummary) => string {
  const dash = DASH[surface]
  const one = (value: number | null | undefined, digits: number): string =>
    value == null ? dash : value.toFixed(digits)
  const keys = result.meta.percentiles.map((p) => `p${p}`)
  const distribution = (level: LevelSummary): Distribution | null =>
    (level[key] as Distribution | null | undefined) ?? null
  switch (cell.kind) {
    case 'level':
      return (level) => levelCell(level, rateMode)
    case 'count':
      return (level) => String(level[key])
    case 'percent':
      return (level) => `${((level[key] as number) * 100).toFixed(1)}%`
    case 'fixed':
      // A figure some levels lack (acceptance_length where the cadence could not tell) is a dash there.
      return (level) => one(level[key] as number | undefined, cell.digits)
    case 'percentiles':
      return (level) => {
        const figures = distribution(level)
        if (figures === null) return dash
        return keys
          .map((p) => {
            const value = one(figures[p], cell.digits)
            if (value === dash || !tooFewSamples(figures, p)) return value
            // A percentile of too few samples is shown with its interval, which says how little it
            // is known (`1200 (≥900)`: nothing bounds it above); results without intervals mark it in the terminal instead
            // (with a legend under its table).
            const interval = markTails ? null : intervalOf(level, key, p)
            if (interval !== null) return `${value} ${tailIntervalText(interval, cell.digits)}`
            return surface === 'terminal' ? `${value}${SMALL_SAMPLE_MARK}` : value
          })
          .join(' / ')
      }
    case 'interval':
      return (level) => {
        const interval = intervalOf(level, cell.metric, cell.key)
        return interval === null || !hasSamples(level, cell) ? dash : intervalText(interval, cell.digits)
      }
    case 'p50':
      return (level) => one(distribution(level)?.p50, cell.digits)
    case 'throughput':
      return throughputCell
    case 'client-loop':
      return (level) =>
        `${Math.round(level.client.event_loop_utilization * 100)}% / ${level.client.event_loop_delay_p99_ms.toFixed(1)} ms`
    case 'slo-good':
      return (level) =>
        level.slo === null ? '' : `${(level.slo.good_share * 100).toFixed(1)}${level.slo.meets ? '' : ' ✗'}`
    case 'cost-tokens':
      return (level) => (level.cost == null ? '' : `${level.cost.input_tokens} / ${level.cost.output_tokens}`)
    case 'cost-amount':
      return (level) => (level.cost == null ? '' : level.cost.amount.toFixed(4))
    case 'verdict':
      return (level) => level.verdict
    case 'server-columns':
    case 'reasoning-columns':
      throw new Error(`${cell.kind} expands to columns of its own`)
  }
}

/** Whether the level has samples of an interval cell's figure: none for a figure that does not apply. */
function hasSamples(level: LevelSummary, cell: { kind: string; metric?: string }): boolean {
  if (cell.metric === undefined) return false
  const distribution = level[cell.metric as keyof LevelSummary] as Distribution | null | undefined
  return (distribution?.count ?? 0) > 0
}
