import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { e2eMs, isOk, tpotMs, ttftMs } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { type FluidityDeadlines, requestFluidity } from './fluidity.js'
import { answerTpotMs, ttfoMs, ttfrMs } from './reasoning-figures.js'
import type { LoadMode } from './summarize.js'

/**
 * One service-level objective: the `percentile` of `metric` must be at most `threshold_ms`; or, for
 * fluidity (`fluidity_p90`, unitless, higher is better), the index 90% of requests reach must be at
 * least the threshold (it is held in `threshold_ms` all the same, as `value_ms` holds the index).
 */
export interface Slo {
  /** As written: ttft_p95_ms, fluidity_p90 */
  key: string
  metric: SloMetric
  percentile: number
  threshold_ms: number
  /** Higher is better (fluidity): met when the value is at least the threshold. */
  at_least?: true
}

/** ttfr, ttfo, answer_tpot: a reasoning model's phases (reasoning-figures.ts). */
export const SLO_METRICS = ['ttft', 'tpot', 'e2e', 'ttfr', 'ttfo', 'answer_tpot'] as const
export type SloMetric = (typeof SLO_METRICS)[number] | 'fluidity'

const SLO_KEY = new RegExp(`^(${SLO_METRICS.join('|')})_p(\\d+(?:\\.\\d+)?)_ms$`)
/** fluidity_p90: the fluidity index (fluidity.ts), unitless, so no _ms. */
const FLUIDITY_KEY = /^fluidity_p(\d+(?:\.\d+)?)$/

/** `ttft_p95_ms` → its parts, or an error message saying what is expected. */
export function parseSloKey(
  key: string,
): { metric: SloMetric; percentile: number; at_least?: true } | string {
  const fluidity = FLUIDITY_KEY.exec(key)
  const match = fluidity === null ? SLO_KEY.exec(key) : null
  const percentile = Number(fluidity?.[1] ?? match?.[2])
  if ((match === null && fluidity === null) || !(percentile > 0 && percentile <= 100)) {
    return `expected a key like ttft_p95_ms, tpot_p99_ms or e2e_p50_ms (metric ${SLO_METRICS.join(', ')}; percentile in (0, 100]), or fluidity_p90 (the fluidity index 90% of requests reach, at least the value), got ${JSON.stringify(key)}`
  }
  if (fluidity !== null) return { metric: 'fluidity', percentile, at_least: true }
  return { metric: (match as RegExpExecArray)[1] as SloMetric, percentile }
}

export function toSlos(thresholds: Record<string, number>): Slo[] {
  return Object.entries(thresholds).map(([key, threshold_ms]) => {
    const parsed = parseSloKey(key)
    if (typeof parsed === 'string') throw new Error(parsed)
    return { key, ...parsed, threshold_ms }
  })
}

export interface SloCheck {
  key: string
  /** The threshold; for fluidity an index in [0, 1]. */
  threshold_ms: number
  /** The error-adjusted percentile: failed requests count as the worst latency (the timeout). */
  value_ms: number | null
  met: boolean
  /** Fluidity: met when value_ms (the index) is at least threshold_ms. */
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

function metricOf(
  record: RequestRecord,
  metric: SloMetric,
  deadlines: FluidityDeadlines | null,
): number | null {
  if (metric === 'fluidity') return deadlines === null ? null : requestFluidity(record, deadlines)
  if (metric === 'ttft') return ttftMs(record)
  if (metric === 'tpot') return tpotMs(record)
  if (metric === 'ttfr') return ttfrMs(record)
  if (metric === 'ttfo') return ttfoMs(record)
  if (metric === 'answer_tpot') return answerTpotMs(record)
  return e2eMs(record)
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
  return {
    add(record) {
      requests++
      const ok = isOk(record)
      let within = ok
      for (let i = 0; i < slos.length; i++) {
        const slo = slos[i] as Slo
        // A failed request is the worst case: the timeout, or no fluidity at all.
        const worst = slo.at_least ? 0 : timeoutMs
        const value = ok ? metricOf(record, slo.metric, deadlines) : worst
        if (value !== null) (values[i] as Samples).push(value)
        if (ok && value !== null && (slo.at_least ? value < slo.threshold_ms : value > slo.threshold_ms))
          within = false
      }
      if (within) {
        good++
        goodTokens += record.output_tokens
      }
    },
    result() {
      const checks = slos.map((slo, i): SloCheck => {
        // Higher is better: p90 is the value 90% of requests reach, the 10th percentile from below.
        const sorted = (values[i] as Samples).sorted()
        const value = percentileOfSorted(sorted, slo.at_least ? 100 - slo.percentile : slo.percentile)
        return {
          key: slo.key,
          threshold_ms: slo.threshold_ms,
          value_ms: value === null ? null : slo.at_least ? round(value, 4) : round(value),
          met: value !== null && (slo.at_least ? value >= slo.threshold_ms : value <= slo.threshold_ms),
          ...(slo.at_least ? { at_least: true as const } : {}),
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
