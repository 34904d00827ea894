import type { RequestRecord } from '../records/types.js'
import { type BucketEstimate, bucketEstimate, histogramIncrease } from './bucket-percentiles.js'
import { type SlotCheck, slotCheck } from './cancel-slots.js'
import { joulesPerOutputToken } from './energy.js'
import type { ScrapeOk, ServerScrape } from './scrape-file.js'
import { type SpecDecodeFigures, specDecodeFigures } from './spec-decode.js'
import {
  type Buckets,
  COUNTER_TERMS,
  type CounterTerm,
  GAUGE_TERMS,
  type GaugeTerm,
  HISTOGRAM_TERMS,
  type HistogramTerm,
} from './vocabulary.js'
import { windowIncrease } from './window-increase.js'

/**
 * The server's own figures for one level, from the scrapes around its measured window: a pure
 * function of server-metrics.jsonl and the level's records, so `report` gets what `run` got.
 */

export interface GaugeFigures {
  mean: number
  max: number
}

/** Where a percentile's true value lies, ms: its bucket's bounds, the top cut at the mean's bound; null = no upper bound known. */
export interface BucketRange {
  low: number
  high: number | null
}

/**
 * Milliseconds; percentiles (p50, p95, ...) interpolated inside histogram buckets and bounded by the
 * exact mean (see bucketEstimate). `ranges` holds, for the percentiles whose bucket is wider than the
 * estimate itself, the interval the true value is in: shown instead of the bare estimate.
 */
export type BucketedDistribution = {
  count: number
  mean: number | null
  ranges?: Record<string, BucketRange>
} & {
  [percentile: `p${string}`]: number | null
}

export interface ServerLevelFigures {
  /** Scrapes that answered inside the level's measured window, over every URL. */
  scrapes: number
  /** Scrapes inside the window that failed or timed out: holes in the figures below. */
  gaps: number
  /** Seconds between the two scrapes the histograms' increases are taken between (counters: the window, see windowIncrease). */
  span_s: number | null
  /**
   * The scrapes the gauges are read over: those inside the level's steady window (every stream in
   * flight) when each URL answered there, else every scrape inside the measured window. Absent in
   * older results (the measured window).
   */
  gauges_over?: 'steady' | 'measured'
  running: GaugeFigures | null
  waiting: GaugeFigures | null
  /** 0..1. */
  kv_cache_usage: GaugeFigures | null
  /** 0..1 */
  gpu_utilization: GaugeFigures | null
  gpu_memory_used_bytes: GaugeFigures | null
  gpu_power_watts: GaugeFigures | null
  /** Prefix-cache hits / queries over the level (their counters), else the mean of the engine's own rate. */
  cache_hit_rate: number | null
  preemptions: number | null
  prompt_tokens: number | null
  generation_tokens: number | null
  gpu_energy_joules: number | null
  /** GPU energy per output token the client received, joules (see joulesPerOutputToken); null without GPU figures. */
  joules_per_output_token: number | null
  ttft_ms_bucketed: BucketedDistribution | null
  queue_time_ms_bucketed: BucketedDistribution | null
  e2e_ms_bucketed: BucketedDistribution | null
  itl_ms_bucketed: BucketedDistribution | null
  /** The client's TTFT p50 beside the server's. */
  client_ttft_p50_ms: number | null
  /**
   * Time outside the engine's scheduler: client TTFT p50 - server TTFT p50 (network, the HTTP layer
   * and its queue, the client). Null unless both exist.
   */
  outside_scheduler_ms: number | null
  /** Speculative decoding as the engine counted it over the level (spec-decode.ts); absent when it publishes none. */
  spec_decode?: SpecDecodeFigures
}

export interface LevelWindow {
  start: number
  end: number
}

/** A level's measured window: first send to last response end of its measured records; null if none. */
export function levelWindow(records: readonly RequestRecord[], value: number): LevelWindow | null {
  let start = Number.POSITIVE_INFINITY
  let end = Number.NEGATIVE_INFINITY
  for (const record of records) {
    if (record.phase !== 'measure' || record.level !== value) continue
    start = Math.min(start, record.sent_at)
    end = Math.max(end, record.end_at)
  }
  return start <= end ? { start, end } : null
}

/** Gauges whose mean and max over several URLs are averaged rather than added. */
const AVERAGED: ReadonlySet<GaugeTerm> = new Set([
  'kv_cache_usage',
  'cache_hit_rate',
  'gpu_utilization',
  'spec_accept_length',
  'spec_accept_rate',
])

type BucketedField = 'ttft_ms_bucketed' | 'queue_time_ms_bucketed' | 'e2e_ms_bucketed' | 'itl_ms_bucketed'
const HISTOGRAM_FIELDS: Record<HistogramTerm, BucketedField> = {
  server_ttft: 'ttft_ms_bucketed',
  server_queue_time: 'queue_time_ms_bucketed',
  server_e2e: 'e2e_ms_bucketed',
  server_itl: 'itl_ms_bucketed',
}

/**
 * Gauges: mean and max of the scrapes inside the window. Counters: their increase over the window
 * itself, its edges estimated (windowIncrease), so the warm-up and cool-down around it are not
 * counted. Histograms (a distribution cannot be cut at a time): their increase from the last scrape
 * at or before the window's start to the first at or after its end (or the first and last inside it
 * when the window is not bracketed), so a level's requests are all counted; span_s says how long
 * that was. Several URLs (replicas, a GPU exporter) are added up, fractions
 * averaged. Null when no scrape of any URL fell in or around the window.
 */
export function serverLevelFigures(
  scrapes: readonly ServerScrape[],
  window: LevelWindow,
  percentiles: readonly number[],
  clientTtftP50Ms: number | null,
  steady: LevelWindow | null = null,
): ServerLevelFigures | null {
  const byUrl = new Map<string, ScrapeOk[]>()
  let gaps = 0
  let inside = 0
  for (const scrape of scrapes) {
    const within = scrape.at >= window.start && scrape.at <= window.end
    if (scrape.kind === 'gap' && within) gaps++
    if (scrape.kind !== 'scrape') continue
    if (within) inside++
    const list = byUrl.get(scrape.url) ?? []
    list.push(scrape)
    byUrl.set(scrape.url, list)
  }
  const lists = [...byUrl.values()].map((list) => list.sort((a, b) => a.at - b.at))
  // The steady window lies inside the measured one; cut to it all the same, so a scrape counted there is one inside.
  const steadyInside =
    steady === null
      ? null
      : { start: Math.max(steady.start, window.start), end: Math.min(steady.end, window.end) }
  const gaugeWindow =
    steadyInside !== null &&
    steadyInside.start <= steadyInside.end &&
    lists.every((list) => !answeredIn(list, window) || answeredIn(list, steadyInside))
      ? steadyInside
      : window
  const perUrl = lists
    .map((list) => urlFigures(list, window, gaugeWindow))
    .filter((figures) => figures !== null)
  if (perUrl.length === 0) return null
  const gauge = (term: GaugeTerm): GaugeFigures | null => combineGauges(perUrl, term)
  const counter = (term: CounterTerm): number | null => {
    const values = perUrl.map((url) => url.counters[term]).filter((value) => value !== undefined)
    return values.length === 0 ? null : round(values.reduce((a, b) => a + b, 0))
  }
  const queries = counter('prefix_cache_queries')
  const hits = counter('prefix_cache_hits')
  const rateGauge = gauge('cache_hit_rate')
  const figures: ServerLevelFigures = {
    scrapes: inside,
    gaps,
    span_s: maxOf(perUrl.map((url) => url.span_s)),
    gauges_over: gaugeWindow === window ? 'measured' : 'steady',
    running: gauge('running'),
    waiting: gauge('waiting'),
    kv_cache_usage: gauge('kv_cache_usage'),
    gpu_utilization: gauge('gpu_utilization'),
    gpu_memory_used_bytes: gauge('gpu_memory_used_bytes'),
    gpu_power_watts: gauge('gpu_power_watts'),
    cache_hit_rate:
      queries !== null && hits !== null && queries > 0 ? round(hits / queries, 4) : (rateGauge?.mean ?? null),
    preemptions: counter('preemptions'),
    prompt_tokens: counter('prompt_tokens'),
    generation_tokens: counter('generation_tokens'),
    gpu_energy_joules: counter('gpu_energy_joules'),
    joules_per_output_token: null,
    ttft_ms_bucketed: null,
    queue_time_ms_bucketed: null,
    e2e_ms_bucketed: null,
    itl_ms_bucketed: null,
    client_ttft_p50_ms: clientTtftP50Ms,
    outside_scheduler_ms: null,
  }
  const specDecode = specDecodeFigures(counter, gauge)
  if (specDecode !== null) figures.spec_decode = specDecode
  const added = (term: HistogramTerm): Buckets | null =>
    addHistograms(perUrl.map((url) => url.histograms[term]).filter((h) => h !== undefined))
  for (const term of HISTOGRAM_TERMS) {
    const histogram = added(term)
    figures[HISTOGRAM_FIELDS[term]] = histogram === null ? null : bucketedMs(histogram, percentiles)
  }
  // The median whatever percentiles the run reports.
  const ttft = added('server_ttft')
  const serverP50 = ttft === null ? null : bucketEstimate(ttft, 50)
  if (clientTtftP50Ms !== null && serverP50 !== null)
    figures.outside_scheduler_ms = round(clientTtftP50Ms - serverP50.value * 1000)
  return figures
}

interface UrlFigures {
  gauges: Partial<Record<GaugeTerm, GaugeFigures>>
  counters: Partial<Record<CounterTerm, number>>
  histograms: Partial<Record<HistogramTerm, Buckets>>
  span_s: number | null
}

/** Whether one of these scrapes answered inside the window. */
function answeredIn(scrapes: readonly ScrapeOk[], window: LevelWindow): boolean {
  return scrapes.some((s) => s.at >= window.start && s.at <= window.end)
}

/**
 * One URL's scrapes (sorted by time) reduced over the window, its gauges over `gaugeWindow` (the
 * window itself or its steady part); null when none is in or around the window.
 */
function urlFigures(
  scrapes: readonly ScrapeOk[],
  window: LevelWindow,
  gaugeWindow: LevelWindow,
): UrlFigures | null {
  const inside = scrapes.filter((s) => s.at >= window.start && s.at <= window.end)
  // The server read its counters somewhere between the scrape's send and its answer: the one before
  // must have been answered before the start, the one after sent after the end.
  const before = scrapes.filter((s) => s.at + s.duration_ms <= window.start).at(-1)
  const after = scrapes.find((s) => s.at >= window.end)
  const series = [
    ...(before === undefined ? [] : [before]),
    ...inside.filter((s) => s !== after),
    ...(after === undefined ? [] : [after]),
  ]
  if (series.length === 0) return null
  const gauges: UrlFigures['gauges'] = {}
  // A level's first wave is still arriving and its last requests drain one by one: a gauge read
  // there says little of the level, and on a short level one such scrape can be half of them.
  const gaugeScrapes = inside.filter((s) => s.at >= gaugeWindow.start && s.at <= gaugeWindow.end)
  for (const term of GAUGE_TERMS) {
    const values = gaugeScrapes.map((s) => s.values.gauges[term]).filter((v) => v !== undefined && v !== null)
    if (values.length === 0) continue
    gauges[term] = { mean: values.reduce((a, b) => a + b, 0) / values.length, max: Math.max(...values) }
  }
  const counters: UrlFigures['counters'] = {}
  const histograms: UrlFigures['histograms'] = {}
  for (const term of COUNTER_TERMS) {
    // The server read its counters somewhere between the scrape's send and its answer: the middle.
    const readings = scrapes.flatMap((s) => {
      const value = s.values.counters[term]
      return value === undefined || value === null ? [] : [{ at: s.at + s.duration_ms / 2, value }]
    })
    const increase = windowIncrease(readings, window)
    if (increase !== null) counters[term] = increase
  }
  if (series.length >= 2) {
    for (const term of HISTOGRAM_TERMS) {
      const values = series.map((s) => s.values.histograms[term])
      if (values.some((v) => v === undefined || v === null)) continue
      const increase = histogramIncrease(values as Buckets[])
      if (increase !== null) histograms[term] = increase
    }
  }
  const first = series[0] as ScrapeOk
  const last = series.at(-1) as ScrapeOk
  return {
    gauges,
    counters,
    histograms,
    span_s: series.length >= 2 ? round((last.at - first.at) / 1000) : null,
  }
}

function combineGauges(perUrl: readonly UrlFigures[], term: GaugeTerm): GaugeFigures | null {
  const figures = perUrl.map((url) => url.gauges[term]).filter((g) => g !== undefined)
  if (figures.length === 0) return null
  const means = figures.map((g) => g.mean)
  const maxes = figures.map((g) => g.max)
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0)
  return AVERAGED.has(term)
    ? { mean: round(sum(means) / means.length, 4), max: round(Math.max(...maxes), 4) }
    : { mean: round(sum(means)), max: round(sum(maxes)) }
}

/** Histograms of several URLs with the same bounds, added; others left out. */
function addHistograms(histograms: readonly Buckets[]): Buckets | null {
  const first = histograms[0]
  if (first === undefined) return null
  const same = histograms.filter(
    (h) =>
      h.buckets.length === first.buckets.length && h.buckets.every(([b], i) => b === first.buckets[i]?.[0]),
  )
  return {
    buckets: first.buckets.map(([bound], i) => [
      bound,
      same.reduce((total, h) => total + (h.buckets[i] as [number, number])[1], 0),
    ]),
    count: same.reduce((total, h) => total + h.count, 0),
    sum: same.some((h) => h.sum === null) ? null : same.reduce((total, h) => total + (h.sum as number), 0),
  }
}

/** Seconds' buckets to a distribution in ms: count, mean (exact, from _sum), bounded percentiles and wide ones' ranges. */
function bucketedMs(histogram: Buckets, percentiles: readonly number[]): BucketedDistribution {
  const result: BucketedDistribution = {
    count: round(histogram.count),
    mean:
      histogram.sum === null || histogram.count <= 0 ? null : round((1000 * histogram.sum) / histogram.count),
  }
  const ranges: Record<string, BucketRange> = {}
  for (const p of percentiles) {
    const key = `p${Number(p.toFixed(3))}` as const
    const estimate = bucketEstimate(histogram, p)
    result[key] = estimate === null ? null : round(estimate.value * 1000)
    if (estimate !== null && isWide(estimate))
      ranges[key] = {
        low: round(estimate.low * 1000),
        high: estimate.high === null ? null : round(estimate.high * 1000),
      }
  }
  if (Object.keys(ranges).length > 0) result.ranges = ranges
  return result
}

/**
 * A bucket as wide as the estimate itself (or with no top) says little of where in it the value is:
 * the estimate could be off by its own size, so the range is what is shown. A value in a first bucket
 * (from 0) always is.
 */
function isWide(estimate: BucketEstimate): boolean {
  if (estimate.high === null) return true
  const width = estimate.high - estimate.low
  return width > 0 && width >= estimate.value
}

function maxOf(values: readonly (number | null)[]): number | null {
  const present = values.filter((v) => v !== null)
  return present.length === 0 ? null : Math.max(...present)
}

function round(value: number, digits = 3): number {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}

/** What the per-level figures need of a level summary. */
interface LevelLike {
  value: number
  ttft_ms: Record<string, number | null>
  output_tokens: number
  duration_s: number
  /** Requests whose reasoning the server hid: their TTFT is not the server's first token (metrics/reasoning-figures.ts). */
  reasoning?: { reasoning_hidden: number }
  /** Seconds from the level's first send (its window's start) while it held its streams. */
  steady_window?: { start_s: number; end_s: number } | null
  mode?: 'concurrency' | 'request_rate'
  /** --cancel-share: the cancelled requests, whose `slots` the scrapes judge (cancel-slots.ts). */
  cancellation?: { output_tokens: number; forgone_tokens: number | null; slots?: SlotCheck }
}

/**
 * The summary with its `server` section (null when no scrape fell in or around its window);
 * unchanged, without a `server` key, when no scrape of the run ever answered, so results without
 * server metrics stay as they were.
 */
export function withServerFigures<T extends LevelLike>(
  summary: T,
  window: LevelWindow | null,
  scrapes: readonly ServerScrape[],
  percentiles: readonly number[],
): T & { server?: ServerLevelFigures | null } {
  if (!scrapes.some((scrape) => scrape.kind === 'scrape')) return summary
  // Hidden reasoning puts the thinking inside the client's TTFT, not the server's: no comparison then.
  const clientTtft = (summary.reasoning?.reasoning_hidden ?? 0) > 0 ? null : (summary.ttft_ms.p50 ?? null)
  const steady =
    window === null || summary.steady_window == null
      ? null
      : {
          start: window.start + summary.steady_window.start_s * 1000,
          end: window.start + summary.steady_window.end_s * 1000,
        }
  const server = window === null ? null : serverLevelFigures(scrapes, window, percentiles, clientTtft, steady)
  if (server !== null)
    server.joules_per_output_token = joulesPerOutputToken(server, summary.output_tokens, summary.duration_s)
  const { cancellation } = summary
  if (cancellation === undefined || window === null) return { ...summary, server }
  const slots = slotCheck(scrapes, summary, window, steady, {
    generated: server?.generation_tokens ?? null,
    received: summary.output_tokens + cancellation.output_tokens,
    forgone: cancellation.forgone_tokens,
  })
  return { ...summary, server, cancellation: { ...cancellation, slots } }
}
