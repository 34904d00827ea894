import type { RequestRecord } from '../records/types.js'
import type { Accumulator } from './accumulator.js'
import type { LevelClientStats } from './client-health.js'
import type { LevelTally } from './level-tally.js'
import type { LevelSummary, LoadMode, SummaryOptions } from './summarize.js'

/**
 * How a level figure is declared: once, in the catalogue (figure-catalogue.ts), with what it means,
 * where it applies, how it is shown and how it is computed. summarizeLevel, the result's
 * definitions, the tables of the terminal, summary.md and report.html, and the docs check are
 * derived from the declarations.
 */

/** What a level's summary holds; verdict and advice are judged afterwards (analysis/), server is added from scrapes. */
export type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>
export type FigureKey = keyof LevelSummary

/** What one level is summarized with: its value, the run's options, the client's self-watch, the tally of its records. */
export interface LevelContext {
  value: number
  options: SummaryOptions
  mode: LoadMode
  clientStats: LevelClientStats
  /** Whether the protocol generates tokens (embeddings do not). */
  generates: boolean
  /** Fed before the figures, so each figure's result can read the level's counts and window. */
  tally: LevelTally
  /** The figures computed so far: each figure's result may read those declared before it. */
  figures: Partial<LevelFigures>
}

/** Where a table cell is drawn. */
export type Surface = 'terminal' | 'markdown' | 'html'

/** How a column's cell is drawn from the level (report/level-columns.ts draws each kind). */
export type CellKind =
  | { kind: 'level' }
  | { kind: 'count' }
  | { kind: 'percent' }
  | { kind: 'fixed'; digits: number }
  /** Every percentile of the run, "p50 / p95 / p99". */
  | { kind: 'percentiles'; digits: number }
  | { kind: 'p50'; digits: number }
  /** A latency figure's 95% interval ("low–high") from the level's intervals. */
  | { kind: 'interval'; metric: string; key: string; digits: number }
  | { kind: 'throughput' }
  | { kind: 'client-loop' }
  | { kind: 'slo-good' }
  | { kind: 'cost-tokens' }
  | { kind: 'cost-amount' }
  | { kind: 'verdict' }
  /** Several columns, each present when some level has its figures (report/server-cells.ts, reasoning-cells.ts). */
  | { kind: 'server-columns' }
  | { kind: 'reasoning-columns' }

/** A column of the per-level table. */
export interface ColumnSpec {
  /** Its name in the terminal's "--wide for" line. */
  name: string
  /**
   * Its heading; `{percentiles}` stands for "p50/p95/p99", `\n` breaks the line in the terminal (a
   * space elsewhere). Per surface where they differ.
   */
  head: string | Readonly<Record<Surface, string>>
  /** Position in the table, left to right. */
  order: number
  /** 0 = the first kept in a narrow terminal. */
  priority: number
  cell: CellKind
  /** Default every surface. */
  surfaces?: readonly Surface[]
  /** Only in runs of this mode. */
  mode?: LoadMode
  /** Only when some level has the figure (not null). */
  whenPresent?: boolean
}

/** One field of a level and what it is. */
export interface FieldSpec {
  /** What one value counts: ms, tokens/s, requests, a 0..1 fraction, ... ('object' for a group of figures). */
  unit: string
  /** The text of bench_result.json's definitions (and docs/results.md's), when the field has one of its own. */
  definition?: string
}

/** Where a figure applies; elsewhere the level holds null, or nothing (`absent`). */
export interface Applicability {
  mode?: LoadMode
  /** Only for protocols that generate tokens (true) or only for those that do not (false). */
  generates?: boolean
  /** Only with SLOs, only with prices. */
  slos?: true
  pricing?: true
  otherwise: 'null' | 'absent'
}

/** How a figure's values are had. */
export type FigureSource<K extends FigureKey> =
  /** Fed every measured record of the level. */
  | { accumulator: (context: LevelContext) => Accumulator<Pick<LevelFigures, K & keyof LevelFigures>> }
  /** From the context: the tally and the figures declared before it (context.figures). */
  | { derive: (context: LevelContext) => Pick<LevelFigures, K & keyof LevelFigures> }
  /** Not from the records: the server's scrapes (server-metrics/), the judgement of the level (analysis/), or the run's own account of it (run/: why it stopped). */
  | { from: 'server-metrics' | 'judgement' | 'run' }

/** A figure: one or more fields of a level computed together. */
export interface LevelFigure<K extends FigureKey = FigureKey> {
  fields: Readonly<Record<K, FieldSpec>>
  source: FigureSource<K>
  applies?: Applicability
  /** A null result leaves the fields out of the level (results of runs without them stay as they were). */
  absentWhenNull?: true
  /** Fed only the requests the client cancelled on purpose (--cancel-share), which no other figure is. */
  takesCancelled?: true
  /** Extra definitions the figure carries for its sub-fields (server.ttft_ms_bucketed, ...). */
  definitions?: Readonly<Record<string, string>>
  columns?: readonly ColumnSpec[]
}

/** A figure of the catalogue, whatever its fields: what summarizeLevel and the renderers read. */
export interface AnyFigure extends Omit<LevelFigure, 'fields' | 'source'> {
  fields: Readonly<Partial<Record<FigureKey, FieldSpec>>>
  source:
    | { accumulator: (context: LevelContext) => Accumulator<Partial<LevelFigures>> }
    | { derive: (context: LevelContext) => Partial<LevelFigures> }
    | { from: 'server-metrics' | 'judgement' | 'run' }
}

/** Declares a figure: its source is checked against its own fields, then it joins the catalogue's list. */
export function figure<K extends FigureKey>(declaration: LevelFigure<K>): AnyFigure {
  return declaration as unknown as AnyFigure
}

/** An accumulator from closures. */
export function accumulator<T>(add: (record: RequestRecord) => void, result: () => T): Accumulator<T> {
  return { add, result }
}
