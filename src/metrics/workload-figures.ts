import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { type Distribution, percentileOfSorted, round } from './distribution.js'
import { Mean } from './mean.js'

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
  /**
   * --images: the input tokens the images account for, per request (the server's count minus the
   * text's requested length, over requests with both), and their share of the server's count.
   * Absent without images.
   */
  image_tokens_mean?: number | null
  image_share?: number | null
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
  /**
   * Of those, the ones late mostly for waiting on their connection (connection_wait_ms at least half the
   * lateness): the server's accept queue or the network, not the client's schedule. Absent in older results.
   */
  late_connecting?: number
  /** The longest connect wait of a measured request; null when the records do not say (absent in older results). */
  connection_wait_ms_max?: number | null
  lateness_p50_ms: number | null
  /** Absent in older results. */
  lateness_p95_ms?: number | null
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
  return accumulate(records, inputAccumulator())
}

/** The same, fed record by record. */
export function inputAccumulator(images = false): Accumulator<InputFigures> {
  const requested = new Mean()
  const server = new Mean()
  // Images: text and server counts of the same requests, so their difference is the images' tokens.
  const pairedText = new Mean()
  const pairedServer = new Mean()
  return {
    add(r) {
      requested.push(r.requested_input_tokens ?? null)
      const counted = r.token_source === 'usage' ? r.input_tokens : null
      server.push(counted)
      if (images && counted !== null && r.requested_input_tokens !== undefined) {
        pairedText.push(r.requested_input_tokens)
        pairedServer.push(counted)
      }
    },
    result: () => {
      const figures: InputFigures = { requested_mean: requested.result(1), server_mean: server.result(1) }
      if (!images) return figures
      const text = pairedText.result(1)
      const all = pairedServer.result(1)
      const imageTokens = text === null || all === null ? null : Math.round((all - text) * 10) / 10
      return {
        ...figures,
        image_tokens_mean: imageTokens,
        image_share:
          imageTokens === null || all === null || all <= 0
            ? null
            : Math.round((imageTokens / all) * 1e4) / 1e4,
      }
    },
  }
}

export function outputFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): OutputFigures {
  return accumulate(records, outputAccumulator(percentiles))
}

/** The same, fed record by record. */
export function outputAccumulator(percentiles: readonly number[]): Accumulator<OutputFigures> {
  const tokens = new Samples()
  const requested = new Mean()
  let stoppedEarly = 0
  return {
    add(r) {
      if (!isOk(r)) return
      tokens.push(r.output_tokens)
      requested.push(r.requested_output_tokens ?? null)
      // finish_reason "length" is the server saying it reached max_tokens: a tokenizer count below it
      // (no usage, another model's vocabulary) is our miscount, not an early stop.
      if (
        r.requested_output_tokens !== undefined &&
        r.output_tokens < r.requested_output_tokens &&
        r.finish_reason !== 'length'
      )
        stoppedEarly++
    },
    result: () => ({
      tokens: tokens.distribution(percentiles),
      requested_mean: requested.result(1),
      stopped_early: stoppedEarly,
      stopped_early_share: tokens.length === 0 ? 0 : round(stoppedEarly / tokens.length, 4),
    }),
  }
}

/** Latency from the intended send time: what a user arriving on schedule waited (coordinated omission). */
export function intendedLatencies(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): { ttft_ms_from_intended: Distribution; e2e_ms_from_intended: Distribution } {
  return accumulate(records, intendedAccumulator(percentiles))
}

/** The same, fed record by record. */
export function intendedAccumulator(
  percentiles: readonly number[],
): Accumulator<{ ttft_ms_from_intended: Distribution; e2e_ms_from_intended: Distribution }> {
  const ttft = new Samples()
  const e2e = new Samples()
  return {
    add(r) {
      if (!isOk(r)) return
      if (r.first_token_at !== null) ttft.push(r.first_token_at - r.scheduled_at)
      e2e.push(r.end_at - r.scheduled_at)
    },
    result: () => ({
      ttft_ms_from_intended: ttft.distribution(percentiles),
      e2e_ms_from_intended: e2e.distribution(percentiles),
    }),
  }
}

export function scheduleFigures(
  records: readonly RequestRecord[],
  arrivals: { planned: number; sent: number; dropped: number } | null,
  maxInFlight: number | null,
): ScheduleFigures {
  return accumulate(
    records,
    scheduleAccumulator(() => ({ arrivals, maxInFlight })),
  )
}

/** What the workers report of a level's arrivals at its end. */
interface ArrivalStats {
  arrivals: { planned: number; sent: number; dropped: number } | null
  maxInFlight: number | null
}

/** A late send whose connect wait was at least this share of its lateness was late for its connection. */
const CONNECTING_SHARE = 0.5

/** Where a late send's wait was: connecting, or before (the client's timer, its in-flight cap). */
export function lateForConnecting(
  record: Pick<RequestRecord, 'sent_at' | 'scheduled_at' | 'connection_wait_ms'>,
): boolean {
  const lateness = record.sent_at - record.scheduled_at
  const connect = record.connection_wait_ms ?? 0
  return lateness > LATE_MS && connect > LATE_MS && connect >= CONNECTING_SHARE * lateness
}

/** The same, fed record by record (each first attempt's lateness); the arrivals are read when the result is. */
export function scheduleAccumulator(stats: () => ArrivalStats): Accumulator<ScheduleFigures> {
  const samples = new Samples()
  let lateConnecting = 0
  let connectMax: number | null = null
  return {
    add(r) {
      if (r.attempt !== 1) return
      samples.push(r.sent_at - r.scheduled_at)
      if (lateForConnecting(r)) lateConnecting++
      if (r.connection_wait_ms !== undefined) connectMax = Math.max(connectMax ?? 0, r.connection_wait_ms)
    },
    result: () => {
      const { arrivals, maxInFlight } = stats()
      return scheduleOf(samples.sorted(), { lateConnecting, connectMax }, arrivals, maxInFlight)
    },
  }
}

function scheduleOf(
  lateness: Float64Array,
  connecting: { lateConnecting: number; connectMax: number | null },
  arrivals: { planned: number; sent: number; dropped: number } | null,
  maxInFlight: number | null,
): ScheduleFigures {
  const late = lateness.filter((value) => value > LATE_MS).length
  // Sends late for their connection are the server's accept queue or the network: the client kept
  // its schedule for them, so they do not make it "fall behind".
  const lateOwn = late - connecting.lateConnecting
  const dropped = arrivals?.dropped ?? 0
  const p99 = percentileOfSorted(lateness, 99)
  const reasons: string[] = []
  if (dropped > 0)
    reasons.push(`${dropped} arrival(s) dropped: they waited past the request timeout for a free slot`)
  if (lateOwn >= 2 && lateOwn > lateness.length * MAX_LATE_SHARE) {
    const bound = maxInFlight === null ? '' : ` (at most ${maxInFlight} in flight)`
    reasons.push(
      `${lateOwn} of ${lateness.length} requests sent over ${LATE_MS} ms after their intended time with their connection ready${bound}, ` +
        `p99 ${p99?.toFixed(0)} ms late: latency from the intended time includes the wait`,
    )
  }
  return {
    planned: arrivals?.planned ?? lateness.length,
    sent: arrivals?.sent ?? lateness.length,
    dropped,
    late,
    late_connecting: connecting.lateConnecting,
    connection_wait_ms_max: roundOrNull(connecting.connectMax),
    lateness_p50_ms: roundOrNull(percentileOfSorted(lateness, 50)),
    lateness_p95_ms: roundOrNull(percentileOfSorted(lateness, 95)),
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

/** The same, fed record by record. */
export function tokenTotalsAccumulator(): Accumulator<{ input_tokens: number; output_tokens: number }> {
  let input = 0
  let output = 0
  return {
    add(r) {
      input += billedInputTokens(r)
      output += r.output_tokens
    },
    result: () => ({ input_tokens: input, output_tokens: output }),
  }
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

function roundOrNull(value: number | null): number | null {
  return value === null ? null : round(value, 2)
}
