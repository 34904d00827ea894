import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import type { FluidityDeadlines } from './fluidity.js'
import { JobLedger } from './job-figures.js'
import {
  type Measure,
  type MeasureKey,
  measureOf,
  measuresFor,
  parseFigureKey,
  worseThan,
} from './measures.js'
import type { LoadMode } from './summarize.js'

/**
 * One service-level objective: the `percentile` of `metric` (a measure of measures.ts) must be
 * within `threshold`: at most it where lower is better, at least it where higher is (`better`, the
 * measure's own direction, copied here so a reader of the objective need not look it up).
 */
export interface Slo {
  /** As written: ttft_p95, fluidity_p90 (or the older ttft_p95_ms). */
  key: string
  metric: SloMetric
  percentile: number
  /** In the measure's unit: ms for a latency, the index for fluidity. */
  threshold: number
  better: Measure['better']
}

/** The measures an SLO may name (measures.ts: ttft, tpot, e2e, the reasoning phases, fluidity). */
export const SLO_METRICS = measuresFor('slo').map((measure) => measure.key)
export type SloMetric = MeasureKey

/** An SLO key's parts; `renamed` is the key as spelled now when an older spelling (ttft_p95_ms) was read. */
export interface SloKey {
  metric: SloMetric
  percentile: number
  better: Measure['better']
  renamed?: string
}

/** `ttft_p95` (or the older `ttft_p95_ms`) → its parts, or an error message saying what is expected. */
export function parseSloKey(key: string): SloKey | string {
  const parsed = parseFigureKey(key, 'slo')
  const percentile = parsed?.percentile ?? Number.NaN
  if (parsed === null || !(percentile > 0 && percentile <= 100)) {
    return `expected a key like ttft_p95, tpot_p99 or e2e_p50 (metric ${SLO_METRICS.filter((key) => measureOf(key)?.unit === 'ms').join(', ')}, in ms; percentile in (0, 100]), or fluidity_p90 (the fluidity index 90% of requests reach, at least the value), got ${JSON.stringify(key)}`
  }
  const parts: SloKey = { metric: parsed.measure.key as SloMetric, percentile, better: parsed.measure.better }
  return parsed.renamed === undefined ? parts : { ...parts, renamed: parsed.renamed }
}

/**
 * The note for SLO keys written in an older spelling (`ttft_p95_ms`, read as `ttft_p95`), naming
 * the spelling now; null when every key is spelled as now. Said once per run, by its caller.
 */
export function oldSloSpellingNote(thresholds: Record<string, number>): string | null {
  const renamed = Object.keys(thresholds).flatMap((key) => {
    const parsed = parseSloKey(key)
    return typeof parsed === 'string' || parsed.renamed === undefined
      ? []
      : [`${key} is now ${parsed.renamed}`]
  })
  if (renamed.length === 0) return null
  return `note: SLO keys are spelled <metric>_p<percentile> now, without _ms: ${renamed.join(', ')} (the old spelling is still read)`
}

/**
 * The objectives of an SLO table, each keyed as written: a result's checks and capacity quote the
 * table (meta.slo) as the run was given it, so a result written before reads the same when
 * reported again (an older ttft_p95_ms stays ttft_p95_ms there).
 */
export function toSlos(thresholds: Record<string, number>): Slo[] {
  return Object.entries(thresholds).map(([key, threshold]) => {
    const parsed = parseSloKey(key)
    if (typeof parsed === 'string') throw new Error(parsed)
    const { renamed: _, ...parts } = parsed
    return { key, ...parts, threshold }
  })
}

export interface SloCheck {
  key: string
  /**
   * The threshold; for fluidity an index in [0, 1]. Named for the latencies in the result's schema
   * (llmbench.result/2); in code the objective's is `Slo.threshold`.
   */
  threshold_ms: number
  /** The error-adjusted percentile: failed requests count as the worst latency (the timeout). */
  value_ms: number | null
  met: boolean
  /** Higher is better (fluidity): met when value_ms (the index) is at least threshold_ms; written from `Slo.better`. */
  at_least?: true
}

export interface LevelSlo {
  checks: SloCheck[]
  /** Every check met. */
  meets: boolean
  /** Share of the level's requests that succeeded and met every objective on their own. */
  good_share: number
  goodput_requests_per_s: number
  goodput_tokens_per_s: number
}

/**
 * SLO accounting for one level, in the spirit of vLLM's goodput: a request is good when it
 * succeeded and each of its own figures is within every threshold; the level meets its SLOs when
 * each objective's percentile, error-adjusted, is within its threshold. Error-adjusted means a
 * failed request counts as the worst latency the client would wait (the request timeout), so a
 * level cannot look fast by failing its slow requests.
 */
export function evaluateSlos(
  records: readonly RequestRecord[],
  slos: readonly Slo[],
  timeoutMs: number,
  windowS: number,
  deadlines: FluidityDeadlines | null = null,
): LevelSlo {
  return accumulate(
    records,
    sloAccumulator(slos, timeoutMs, () => windowS, deadlines),
  )
}

/** The same, fed record by record: each objective's values, the good requests and their tokens. */
export function sloAccumulator(
  slos: readonly Slo[],
  timeoutMs: number,
  windowS: () => number,
  /** The run's fluidity deadlines, for fluidity objectives (null: none can be judged). */
  deadlines: FluidityDeadlines | null = null,
): Accumulator<LevelSlo> {
  let requests = 0
  let good = 0
  let goodTokens = 0
  const values = slos.map(() => new Samples())
  const measures = slos.map((slo) => measureOf(slo.metric) as Measure)
  // Job completion time is a job's, not a request's: its values come from the level's jobs at the end.
  const jobs = slos.some((slo) => slo.metric === 'jct') ? new JobLedger() : null
  return {
    add(record) {
      requests++
      jobs?.add(record)
      const ok = isOk(record)
      let within = ok
      for (let i = 0; i < slos.length; i++) {
        const slo = slos[i] as Slo
        if (slo.metric === 'jct') continue
        const measure = measures[i] as Measure
        const samples = values[i] as Samples
        // A failed request is the worst case: the timeout, or no fluidity at all.
        if (!ok) samples.push(slo.better === 'higher' ? 0 : timeoutMs)
        // A request with several values (ITL's gaps) is within only when each of them is.
        else
          measure.read(
            record,
            {
              push(value) {
                samples.push(value)
                if (worseThan(slo, value, slo.threshold)) within = false
              },
            },
            deadlines,
          )
      }
      if (within) {
        good++
        goodTokens += record.output_tokens
      }
    },
    result() {
      if (jobs !== null) {
        const times = jobs.completionTimesMs(timeoutMs)
        slos.forEach((slo, i) => {
          if (slo.metric === 'jct') (values[i] as Samples).pushAll(times)
        })
      }
      const checks = slos.map((slo, i): SloCheck => {
        const higher = slo.better === 'higher'
        // Higher is better: p90 is the value 90% of requests reach, the 10th percentile from below.
        const sorted = (values[i] as Samples).sorted()
        const value = percentileOfSorted(sorted, higher ? 100 - slo.percentile : slo.percentile)
        return {
          key: slo.key,
          threshold_ms: slo.threshold,
          value_ms: value === null ? null : higher ? round(value, 4) : round(value),
          met: value !== null && !worseThan(slo, value, slo.threshold),
          ...(higher ? { at_least: true as const } : {}),
        }
      })
      const seconds = windowS()
      return {
        checks,
        meets: requests > 0 && checks.every((check) => check.met),
        good_share: requests === 0 ? 0 : round(good / requests, 4),
        goodput_requests_per_s: seconds > 0 ? round(good / seconds, 3) : 0,
        goodput_tokens_per_s: seconds > 0 ? round(goodTokens / seconds, 2) : 0,
      }
    },
  }
}

/** The capacity under the SLOs: a level value, streams or requests per second as `mode` says. */
export interface Capacity {
  value: number
  mode: LoadMode
  reason: string
}

/** The highest level that meets every SLO (the capacity under those objectives), or null. */
export function findCapacity(
  levels: readonly { value: number; mode: LoadMode; slo: LevelSlo | null }[],
): Capacity | null {
  const meeting = levels.filter((level) => level.slo?.meets === true)
  if (meeting.length === 0) return null
  const best = meeting.reduce((a, b) => (b.value > a.value ? b : a))
  const figures = (best.slo as LevelSlo).checks
    .map((c) => `${c.key} ${c.value_ms} ${c.at_least ? '≥' : '≤'} ${c.threshold_ms}`)
    .join(', ')
  return { value: best.value, mode: best.mode, reason: `highest level meeting every SLO: ${figures}` }
}
