import { inconclusiveReason } from '../analysis/client-trust.js'
import { bootstrapPercentileDifference, mannWhitney, normalCdf } from '../analysis/stats.js'
import { throughputChange } from '../analysis/throughput-change.js'
import { e2eMs, isOk, pushItlMs, tpotMs, ttftMs } from '../metrics/derive.js'
import { percentileOfSorted, round } from '../metrics/distribution.js'
import type { LevelSummary, LoadMode } from '../metrics/summarize.js'
import type { RequestRecord } from '../records/types.js'
import type { RunMeta } from '../result/run-meta.js'

/** A compared figure: latency percentiles (ttft_p95 ...), throughput or success_rate. */
export interface MetricComparison {
  metric: string
  base: number | null
  new: number | null
  /** (new - base) / base, or the difference in points for success_rate. */
  change: number | null
  /** Probability of seeing this difference if nothing changed. */
  p_value: number | null
  /** 95% bootstrap interval of the relative change (latencies and throughput). */
  interval: { low: number; high: number } | null
  threshold: number | null
  /** Worse by more than the threshold. */
  beyond_threshold: boolean
  /** The worsening is statistically significant (p < 0.05 and the interval excludes 0). */
  significant: boolean
  regressed: boolean
}

export interface LevelComparison {
  /** The level value, as Comparison.mode says. */
  value: number
  metrics: MetricComparison[]
  /** Why the level's changes may be the client's (either run's), or null: it then gates only with strictClient. */
  inconclusive: string | null
}

export interface Comparison {
  /** What differs between the runs' set-ups; compared only when allowed. */
  mismatches: string[]
  /** What the level values are: streams, or requests per second. */
  mode: LoadMode
  levels: LevelComparison[]
  regressions: { value: number; metric: string; change: number }[]
  /** Regressions at inconclusive levels: shown, not gated (unless strictClient). */
  inconclusive: { value: number; metric: string; change: number; reason: string }[]
}

export interface RunRecords {
  meta: RunMeta
  records: readonly RequestRecord[]
  /** The run's own level summaries, for how its client fared; absent = the client is not judged. */
  levels?: readonly Pick<LevelSummary, 'value' | 'client'>[]
}

export interface CompareOptions {
  /** Gate on levels where either run's client was not trustworthy too. Default false. */
  strictClient?: boolean
}

/** Default gates: relative worsening allowed per metric; success_rate in points (0.01 = 1 point). */
export const DEFAULT_MAX_REGRESSION: Record<string, number> = {
  ttft_p95: 0.1,
  tpot_p95: 0.1,
  e2e_p95: 0.1,
  throughput: 0.05,
  success_rate: 0.01,
}

const SIGNIFICANCE = 0.05
const LATENCY_METRICS = ['ttft', 'tpot', 'itl', 'e2e'] as const

/** Differences in set-up that make two runs incomparable, in words; the first thing compare says. */
export function setupMismatches(base: RunMeta, next: RunMeta): string[] {
  const out: string[] = []
  const differ = (what: string, a: unknown, b: unknown): void => {
    if (JSON.stringify(a) !== JSON.stringify(b))
      out.push(`${what}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
  }
  differ('model', base.target.model, next.target.model)
  differ('input tokens', base.workload.input_tokens, next.workload.input_tokens)
  differ('output tokens', base.workload.output_tokens, next.workload.output_tokens)
  differ('levels', base.load.levels, next.load.levels)
  differ('warm-up requests', base.load.warmup_requests, next.load.warmup_requests)
  differ('stream', base.workload.stream, next.workload.stream)
  differ('load mode', base.load.mode ?? 'concurrency', next.load.mode ?? 'concurrency')
  // Keys newer results carry: compared when both runs have them, so a baseline from an older
  // version still compares on what it records.
  const both = <T>(what: string, pick: (meta: RunMeta) => T | undefined): void => {
    const a = pick(base)
    const b = pick(next)
    if (a !== undefined && b !== undefined) differ(what, a, b)
  }
  both('input lengths', (meta) => meta.workload.input)
  both('output lengths', (meta) => meta.workload.output)
  both('prompts', (meta) => (meta.workload.input === undefined ? undefined : meta.workload.dataset))
  both('arrival process', (meta) => meta.load.arrival)
  both('ignore_eos', (meta) => meta.workload.ignore_eos)
  both('stop rule', stopRule)
  both(
    'trace replayed',
    (meta) => meta.trace && { file: meta.trace.file, rows: meta.trace.rows_used, window: meta.trace.window },
  )
  return out
}

/**
 * How each level ended: after a count of requests, or after a duration (with its warm-up and
 * cool-down). 40 requests and 30 s per level measure different windows (ramp-up and drain weigh
 * differently), so they are a set-up difference like the lengths. Undefined in results without it.
 */
function stopRule(meta: RunMeta): string | undefined {
  const { load } = meta
  if (load.duration_per_level !== undefined) {
    const extra =
      (load.warmup_s ?? 0) > 0 || (load.cooldown_s ?? 0) > 0
        ? ` (+${load.warmup_s ?? 0} s warm-up, +${load.cooldown_s ?? 0} s cool-down)`
        : ''
    return `${load.duration_per_level} s per level${extra}`
  }
  if (load.requests_per_level !== undefined) return `${load.requests_per_level} requests per level`
  return undefined
}

interface LevelSamples {
  ttft: number[]
  tpot: number[]
  itl: number[]
  e2e: number[]
  tokens: number[]
  /** Every measured request, failed ones included (0 tokens): what the level throughput is made of. */
  throughput: { tokens: number[]; seconds: number[] }
  windowS: number
  ok: number
  total: number
}

function samplesOf(records: readonly RequestRecord[], value: number): LevelSamples {
  const samples: LevelSamples = {
    ttft: [],
    tpot: [],
    itl: [],
    e2e: [],
    tokens: [],
    throughput: { tokens: [], seconds: [] },
    windowS: 0,
    ok: 0,
    total: 0,
  }
  let start = Number.POSITIVE_INFINITY
  let end = Number.NEGATIVE_INFINITY
  for (const record of records) {
    if (record.phase !== 'measure' || record.level !== value) continue
    samples.total++
    start = Math.min(start, record.sent_at)
    end = Math.max(end, record.end_at)
    samples.throughput.seconds.push((record.end_at - record.sent_at) / 1000)
    samples.throughput.tokens.push(isOk(record) ? record.output_tokens : 0)
    if (!isOk(record)) continue
    samples.ok++
    samples.tokens.push(record.output_tokens)
    const first = ttftMs(record)
    if (first !== null) samples.ttft.push(first)
    const perToken = tpotMs(record)
    if (perToken !== null) samples.tpot.push(perToken)
    pushItlMs(record, samples.itl)
    samples.e2e.push(e2eMs(record))
  }
  samples.windowS = samples.total === 0 ? 0 : (end - start) / 1000
  return samples
}

function latencyComparison(
  metric: string,
  base: number[],
  next: number[],
  percentile: number,
  threshold: number | null,
): MetricComparison {
  const sortedBase = [...base].sort((a, b) => a - b)
  const sortedNew = [...next].sort((a, b) => a - b)
  const b = percentileOfSorted(sortedBase, percentile)
  const n = percentileOfSorted(sortedNew, percentile)
  const change = b !== null && n !== null && b !== 0 ? (n - b) / b : null
  // The tests cost time on large samples (ITL has one per token): only gated metrics get them.
  const test = threshold === null ? null : mannWhitney(base, next)
  const interval = threshold === null ? null : bootstrapPercentileDifference(base, next, percentile, 500)
  const significant = test !== null && test.p_value < SIGNIFICANCE && interval !== null && interval.low > 0
  const beyond = threshold !== null && change !== null && change > threshold
  return comparison(metric, {
    b,
    n,
    digits: 3,
    change,
    p: test?.p_value ?? null,
    interval,
    threshold,
    beyond,
    significant,
  })
}

/** One compared figure, rounded for the report; regressed = beyond the threshold and significant. */
function comparison(
  metric: string,
  figures: {
    b: number | null
    n: number | null
    digits: number
    change: number | null
    p: number | null
    interval: { low: number; high: number } | null
    threshold: number | null
    beyond: boolean
    significant: boolean
  },
): MetricComparison {
  const { b, n, digits, change, p, interval, threshold, beyond, significant } = figures
  return {
    metric,
    base: b === null ? null : round(b, digits),
    new: n === null ? null : round(n, digits),
    change: change === null ? null : round(change, 4),
    p_value: p === null ? null : round(p, 6),
    interval: interval === null ? null : { low: round(interval.low, 4), high: round(interval.high, 4) },
    threshold,
    beyond_threshold: beyond,
    significant,
    regressed: beyond && significant,
  }
}

/**
 * Throughput: the figure is Σ tokens / window, one number per run; its change, interval and
 * p-value all come from one bootstrap of that figure (see throughputChange).
 */
function throughputComparison(
  base: LevelSamples,
  next: LevelSamples,
  threshold: number | null,
  closedLoop: boolean,
): MetricComparison {
  const rate = (s: LevelSamples): number | null =>
    s.windowS > 0 ? s.tokens.reduce((a, b) => a + b, 0) / s.windowS : null
  const b = rate(base)
  const n = rate(next)
  const change = b !== null && n !== null && b !== 0 ? (n - b) / b : null
  const tested =
    threshold === null || b === null || n === null
      ? null
      : throughputChange(
          { ...base.throughput, figure: b },
          { ...next.throughput, figure: n },
          closedLoop,
          500,
        )
  const interval = tested?.interval ?? null
  const p = tested?.p_value ?? null
  const significant = p !== null && p < SIGNIFICANCE && interval !== null && interval.high < 0
  const beyond = threshold !== null && change !== null && -change > threshold
  return comparison('throughput', {
    b,
    n,
    digits: 2,
    change,
    p,
    interval,
    threshold,
    beyond,
    significant,
  })
}

/** Success rates: a two-proportion z-test; the change is in points (0.01 = one point). */
function successComparison(
  base: LevelSamples,
  next: LevelSamples,
  threshold: number | null,
): MetricComparison {
  const b = base.total === 0 ? null : base.ok / base.total
  const n = next.total === 0 ? null : next.ok / next.total
  let p: number | null = null
  if (b !== null && n !== null) {
    const pooled = (base.ok + next.ok) / (base.total + next.total)
    const se = Math.sqrt(pooled * (1 - pooled) * (1 / base.total + 1 / next.total))
    p = se === 0 ? (b === n ? 1 : 0) : 2 * (1 - normalCdf(Math.abs(n - b) / se))
  }
  const change = b !== null && n !== null ? n - b : null
  const beyond = threshold !== null && change !== null && -change > threshold
  const significant = p !== null && p < SIGNIFICANCE && change !== null && change < 0
  return comparison('success_rate', {
    b,
    n,
    digits: 4,
    change,
    p,
    interval: null,
    threshold,
    beyond,
    significant,
  })
}

/** Compares two runs level by level, from their raw records (never from averaged summaries). */
export function compareRuns(
  base: RunRecords,
  next: RunRecords,
  maxRegression: Record<string, number>,
  options: CompareOptions = {},
): Comparison {
  const levels = base.meta.levels_run
    .map((level) => level.value)
    .filter((value) => next.meta.levels_run.some((level) => level.value === value))
  const percentiles = base.meta.percentiles
  const result: Comparison = {
    mismatches: setupMismatches(base.meta, next.meta),
    mode: base.meta.load.mode ?? 'concurrency',
    levels: [],
    regressions: [],
    inconclusive: [],
  }
  for (const value of levels) {
    const a = samplesOf(base.records, value)
    const b = samplesOf(next.records, value)
    const metrics: MetricComparison[] = []
    for (const metric of LATENCY_METRICS) {
      for (const percentile of percentiles) {
        const name = `${metric}_p${percentile}`
        metrics.push(latencyComparison(name, a[metric], b[metric], percentile, maxRegression[name] ?? null))
      }
    }
    metrics.push(throughputComparison(a, b, maxRegression.throughput ?? null, result.mode === 'concurrency'))
    metrics.push(successComparison(a, b, maxRegression.success_rate ?? null))
    const clientOf = (run: RunRecords) => run.levels?.find((level) => level.value === value)?.client
    const inconclusive = inconclusiveReason(clientOf(base), clientOf(next))
    for (const metric of metrics) {
      if (!metric.regressed) continue
      const found = { value, metric: metric.metric, change: metric.change ?? 0 }
      if (inconclusive === null || options.strictClient === true) result.regressions.push(found)
      else result.inconclusive.push({ ...found, reason: inconclusive })
    }
    result.levels.push({ value, metrics, inconclusive })
  }
  return result
}
