import type { RequestRecord } from '../records/types.js'
import { isOk } from './derive.js'
import { type Distribution, percentileOfSorted, round, summarizeSamples } from './distribution.js'

/**
 * What a level's requests asked for and got, beside the latency figures: input tokens requested vs
 * counted by the server, the output lengths reached (and how many stopped early), latency from the
 * intended send time and the schedule's health in request-rate mode, and the cost of the tokens.
 */

export interface InputFigures {
  /** Mean requested input tokens (the plan), null when records do not say. */
  requested_mean: number | null
  /** Mean of usage.prompt_tokens, null when the server sent none. */
  server_mean: number | null
}

export interface OutputFigures {
  /** Output tokens per successful request. */
  tokens: Distribution
  requested_mean: number | null
  /** Successful requests that ended before their max_tokens (end of sequence). */
  stopped_early: number
  stopped_early_share: number
}

/** Request-rate mode: how well the client kept to its schedule. */
export interface ScheduleFigures {
  /** Arrivals in the whole level (warm-up and cool-down windows included) ... */
  planned: number
  sent: number
  /** ... never sent: they waited longer than the request timeout for a free slot, or the run stopped. */
  dropped: number
  /** Measured requests sent more than LATE_MS after their intended time. */
  late: number
  lateness_p50_ms: number | null
  lateness_p99_ms: number | null
  /** The latest send of the level: how far behind the client ever was (absent in older results). */
  lateness_max_ms?: number | null
  fell_behind: boolean
  reason: string | null
}

export interface CostFigures {
  input_tokens: number
  output_tokens: number
  amount: number
  currency: string
}

export interface Prices {
  input_per_mtok: number
  output_per_mtok: number
  currency: string
}

/**
 * A measured request sent this much after its intended time counts as late: well above the timer
 * jitter of a shared VM (an idle Node process here sees timers ~10 ms late at worst).
 */
export const LATE_MS = 20
/** More than this share of late requests (and at least two), or any dropped arrival, means the client fell behind. */
const MAX_LATE_SHARE = 0.02
/** A level where more than this share of requests stopped early is flagged. */
export const STOPPED_EARLY_FLAG_SHARE = 0.1

export function inputFigures(records: readonly RequestRecord[]): InputFigures {
  return {
    requested_mean: meanOf(records, (r) => r.requested_input_tokens ?? null),
    server_mean: meanOf(records, (r) => (r.token_source === 'usage' ? r.input_tokens : null)),
  }
}

export function outputFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): OutputFigures {
  const ok = records.filter(isOk)
  // finish_reason "length" is the server saying it reached max_tokens: a tokenizer count below it
  // (no usage, another model's vocabulary) is our miscount, not an early stop.
  const stoppedEarly = ok.filter(
    (r) =>
      r.requested_output_tokens !== undefined &&
      r.output_tokens < r.requested_output_tokens &&
      r.finish_reason !== 'length',
  ).length
  return {
    tokens: summarizeSamples(
      ok.map((r) => r.output_tokens),
      percentiles,
    ),
    requested_mean: meanOf(ok, (r) => r.requested_output_tokens ?? null),
    stopped_early: stoppedEarly,
    stopped_early_share: ok.length === 0 ? 0 : round(stoppedEarly / ok.length, 4),
  }
}

/** Latency from the intended send time: what a user arriving on schedule waited (coordinated omission). */
export function intendedLatencies(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): { ttft_ms_from_intended: Distribution; e2e_ms_from_intended: Distribution } {
  const ok = records.filter(isOk)
  return {
    ttft_ms_from_intended: summarizeSamples(
      ok.flatMap((r) => (r.first_token_at === null ? [] : [r.first_token_at - r.scheduled_at])),
      percentiles,
    ),
    e2e_ms_from_intended: summarizeSamples(
      ok.map((r) => r.end_at - r.scheduled_at),
      percentiles,
    ),
  }
}

export function scheduleFigures(
  records: readonly RequestRecord[],
  arrivals: { planned: number; sent: number; dropped: number } | null,
  maxInFlight: number | null,
): ScheduleFigures {
  const lateness = Float64Array.from(
    records.filter((r) => r.attempt === 1).map((r) => r.sent_at - r.scheduled_at),
  ).sort()
  const late = lateness.filter((value) => value > LATE_MS).length
  const dropped = arrivals?.dropped ?? 0
  const p99 = percentileOfSorted(Array.from(lateness), 99)
  const reasons: string[] = []
  if (dropped > 0)
    reasons.push(`${dropped} arrival(s) dropped: they waited past the request timeout for a free slot`)
  if (late >= 2 && late > lateness.length * MAX_LATE_SHARE) {
    const bound = maxInFlight === null ? '' : ` (at most ${maxInFlight} in flight)`
    reasons.push(
      `${late} of ${lateness.length} requests sent over ${LATE_MS} ms after their intended time${bound}, ` +
        `p99 ${p99?.toFixed(0)} ms late: latency from the intended time includes the wait`,
    )
  }
  return {
    planned: arrivals?.planned ?? lateness.length,
    sent: arrivals?.sent ?? lateness.length,
    dropped,
    late,
    lateness_p50_ms: roundOrNull(percentileOfSorted(Array.from(lateness), 50)),
    lateness_p99_ms: roundOrNull(p99),
    lateness_max_ms: roundOrNull(lateness.length === 0 ? null : (lateness[lateness.length - 1] as number)),
    fell_behind: reasons.length > 0,
    reason: reasons.length === 0 ? null : reasons.join('; '),
  }
}

/** Input tokens billed for one request: as the server counted them, else as requested. */
export function billedInputTokens(record: RequestRecord): number {
  return record.input_tokens ?? record.requested_input_tokens ?? 0
}

/** Tokens billed: input as billedInputTokens, output as received. */
export function tokenTotals(records: readonly RequestRecord[]): {
  input_tokens: number
  output_tokens: number
} {
  let input = 0
  let output = 0
  for (const r of records) {
    input += billedInputTokens(r)
    output += r.output_tokens
  }
  return { input_tokens: input, output_tokens: output }
}

export function costOf(tokens: { input_tokens: number; output_tokens: number }, prices: Prices): CostFigures {
  return {
    ...tokens,
    amount: priceTokens(tokens.input_tokens, tokens.output_tokens, prices),
    currency: prices.currency,
  }
}

export function priceTokens(input: number, output: number, prices: Prices): number {
  return round((input * prices.input_per_mtok + output * prices.output_per_mtok) / 1e6, 6)
}

function meanOf(records: readonly RequestRecord[], pick: (r: RequestRecord) => number | null): number | null {
  let sum = 0
  let n = 0
  for (const r of records) {
    const value = pick(r)
    if (value === null) continue
    sum += value
    n++
  }
  return n === 0 ? null : round(sum / n, 1)
}

function roundOrNull(value: number | null): number | null {
  return value === null ? null : round(value, 2)
}
