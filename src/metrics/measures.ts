import type { RequestRecord } from '../records/types.js'
import { e2eMs, pushItlMs, tpotMs, ttftMs } from './derive.js'
import { type FluidityDeadlines, fluidityIndex } from './fluidity.js'
import { answerTpotMs, ttfoMs, ttfrMs } from './reasoning-figures.js'

/**
 * Every per-request measure, declared once: its key, how it is read from a record, its unit, which
 * direction is better, the smallest change a gate takes for more than noise, its display name, and
 * where it is used. SLO keys, --precision keys, compare's gated figures and floors, the drift
 * control, levels.csv and the docs' figure list iterate over this list: a new measure is one entry
 * here (and its reader). Keys are spelled `<key>_p<percentile>` everywhere (ttft_p95, fluidity_p90).
 */

/** Where a value read from a record goes: a Samples, an array, or a check of each value. */
export interface ValueSink {
  push(value: number): void
}

export interface Measure {
  /** The spelling in every key: ttft → ttft_p95 in --slo, --precision and --max-regression (a result field holding it in ms: ttft_p95_ms). */
  key: string
  /** As people write it: TTFT p95. */
  name: string
  /** ms, or index (fluidity: unitless, 0 to 1). */
  unit: 'ms' | 'index'
  /** Lower is better for every latency; the fluidity index is better higher. Decided here, once. */
  better: 'lower' | 'higher'
  /**
   * The smallest absolute change a gate takes for more than noise (compare's default floor, the
   * drift control's): a +30% TPOT on a 2 ms figure is 0.6 ms of scheduling, not a slower server.
   * Null: no floor.
   */
  floor: number | null
  /**
   * compare's default gate: the relative worsening allowed of its p50, p95 and p99 (0.1: +10%);
   * null: compared, not gated unless --max-regression names it.
   */
  gate: number | null
  /** one value per request, or many (ITL: one per gap, alike within a request: no independent draws). */
  values: 'one' | 'many'
  /** The level summary's distribution of it (levels[].ttft_ms), where a level has one of its own. */
  field?: 'ttft_ms' | 'tpot_ms' | 'itl_ms' | 'e2e_ms'
  /**
   * Its values in one successful request: one for most (none when the request has no such
   * figure), one per gap between token-bearing events for ITL. Fluidity needs the run's deadlines.
   */
  read(record: RequestRecord, into: ValueSink, deadlines: FluidityDeadlines | null): void
  /**
   * Its fastest requests show the server's own cost: a `--paired` comparison also judges its p10 over
   * both sides' pooled blocks (compare.ts PAIRED_FLOOR_PERCENTILE), which a neighbour switching on
   * and off does not move. Only TPOT: a level's fastest TTFTs (and so E2Es) are the requests that found
   * a slot free at the start of a block, an order of arrival rather than a cost.
   */
  pairedFloor: boolean
  /** Where it is used: an SLO on a percentile, a --precision target, compare's percentiles. */
  slo: boolean
  precision: boolean
  compare: boolean
}

/** A measure with one value per request, or none. */
function one(of: (record: RequestRecord) => number | null): Measure['read'] {
  return (record, into) => {
    const value = of(record)
    if (value !== null) into.push(value)
  }
}

export const MEASURES = [
  {
    key: 'ttft',
    gate: 0.1,
    values: 'one',
    name: 'TTFT',
    unit: 'ms',
    better: 'lower',
    floor: 5,
    field: 'ttft_ms',
    read: one(ttftMs),
    pairedFloor: false,
    slo: true,
    precision: true,
    compare: true,
  },
  {
    key: 'tpot',
    gate: 0.1,
    values: 'one',
    name: 'TPOT',
    unit: 'ms',
    better: 'lower',
    floor: 1,
    field: 'tpot_ms',
    read: one(tpotMs),
    pairedFloor: true,
    slo: true,
    precision: true,
    compare: true,
  },
  {
    key: 'itl',
    gate: null,
    values: 'many',
    name: 'ITL',
    unit: 'ms',
    better: 'lower',
    floor: 1,
    field: 'itl_ms',
    read: (record, into) => pushItlMs(record, into),
    pairedFloor: false,
    slo: true,
    precision: true,
    compare: true,
  },
  {
    key: 'e2e',
    gate: 0.1,
    values: 'one',
    name: 'E2E',
    unit: 'ms',
    better: 'lower',
    floor: 10,
    field: 'e2e_ms',
    read: one(e2eMs),
    pairedFloor: false,
    slo: true,
    precision: true,
    compare: true,
  },
  // A reasoning model's phases (reasoning-figures.ts).
  {
    key: 'ttfr',
    gate: null,
    values: 'one',
    name: 'TTFR',
    unit: 'ms',
    better: 'lower',
    floor: null,
    read: one(ttfrMs),
    pairedFloor: false,
    slo: true,
    precision: false,
    compare: false,
  },
  {
    key: 'ttfo',
    gate: null,
    values: 'one',
    name: 'TTFO',
    unit: 'ms',
    better: 'lower',
    floor: null,
    read: one(ttfoMs),
    pairedFloor: false,
    slo: true,
    precision: false,
    compare: false,
  },
  {
    key: 'answer_tpot',
    gate: null,
    values: 'one',
    name: 'answer TPOT',
    unit: 'ms',
    better: 'lower',
    floor: null,
    read: one(answerTpotMs),
    pairedFloor: false,
    slo: true,
    precision: false,
    compare: false,
  },
  {
    // A job's figure, not a request's (--jobs): slo.ts reads it from the level's jobs (job-figures.ts).
    key: 'jct',
    gate: null,
    values: 'one',
    name: 'JCT',
    unit: 'ms',
    better: 'lower',
    floor: null,
    read: () => {},
    pairedFloor: false,
    slo: true,
    precision: false,
    compare: false,
  },
  {
    key: 'fluidity',
    gate: null,
    values: 'one',
    name: 'fluidity',
    unit: 'index',
    better: 'higher',
    floor: null,
    read: (record, into, deadlines) => {
      const index = deadlines === null ? null : fluidityIndex(record.sent_at, record.token_times, deadlines)
      if (index !== null) into.push(index)
    },
    pairedFloor: false,
    slo: true,
    precision: false,
    compare: false,
  },
] as const satisfies readonly Measure[]

export type MeasureKey = (typeof MEASURES)[number]['key']

const BY_KEY = new Map<string, Measure>(MEASURES.map((measure) => [measure.key, measure]))

/** The measure a key names (ttft), or undefined. */
export function measureOf(key: string): Measure | undefined {
  return BY_KEY.get(key)
}

/** The measures used by one consumer, in the catalogue's order. */
export function measuresFor(use: 'slo' | 'precision' | 'compare'): readonly Measure[] {
  return MEASURES.filter((measure) => measure[use])
}

/** `ttft_p95`: a measure at a percentile, as every key spells it. */
export function figureKey(measure: Pick<Measure, 'key'>, percentile: number): string {
  return `${measure.key}_p${percentile}`
}

/** `TTFT p95`: as a report writes it. */
export function figureName(measure: Pick<Measure, 'name'>, percentile: number): string {
  return `${measure.name} p${percentile}`
}

/**
 * `ttft_p95` (or the older spelling --slo still reads, `ttft_p95_ms`) → the measure of `use` and
 * the percentile; null when the key names none. `renamed` is set when the older spelling was read:
 * the key as it is spelled now, for the caller's note.
 */
export function parseFigureKey(
  key: string,
  use: 'slo' | 'precision' | 'compare',
): { measure: Measure; percentile: number; renamed?: string } | null {
  const match = /^([a-z][a-z0-9_]*?)_p(\d+(?:\.\d+)?)(_ms)?$/.exec(key)
  if (match === null) return null
  const measure = measureOf(match[1] as string)
  if (measure === undefined || !measure[use]) return null
  // _ms was the SLO keys' spelling for a latency until every key became `<key>_p<percentile>`; never a fluidity's.
  if (match[3] !== undefined && (use !== 'slo' || measure.unit !== 'ms')) return null
  const percentile = Number(match[2])
  const parsed = { measure, percentile }
  return match[3] === undefined ? parsed : { ...parsed, renamed: figureKey(measure, percentile) }
}

/** Is `value` worse than `limit` for this measure (above it when lower is better)? */
export function worseThan(measure: Pick<Measure, 'better'>, value: number, limit: number): boolean {
  return measure.better === 'lower' ? value > limit : value < limit
}

/** The keys a consumer reads, for its messages: ttft, tpot, e2e. */
export function keysFor(use: 'slo' | 'precision' | 'compare'): string {
  return measuresFor(use)
    .map((measure) => measure.key)
    .join(', ')
}
