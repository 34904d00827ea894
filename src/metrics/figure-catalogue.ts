import { protocolOf } from '../protocols/wire-protocol.js'
import { fdLimitReason, hitClientFdLimit } from '../records/client-fd-limit.js'
import { ERROR_CLASSES, type ErrorClass, type RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'
import { splitEvenly } from '../schedule/split.js'
import type { Accumulator } from './accumulator.js'
import { Samples } from './accumulator.js'
import { cacheEffectAccumulator } from './cache-effect.js'
import { cancellationAccumulator } from './cancellation-figures.js'
import { judgeClient } from './client-health.js'
import { connectionAccumulator, connectionNotes } from './connection-figures.js'
import { e2eMs, isOk, ttftMs } from './derive.js'
import { type Distribution, percentileOfSorted, round, summarizeSorted } from './distribution.js'
import { embeddingAccumulator } from './embedding-figures.js'
import { eventAccumulator, eventNotes } from './event-figures.js'
import { FailureGroups } from './failure-causes.js'
import {
  type AnyFigure,
  accumulator,
  type ColumnSpec,
  figure,
  type LevelContext,
  type LevelFigures,
} from './figure.js'
import { fluidityAccumulator } from './fluidity.js'
import { inBandAccumulator } from './in-band-figures.js'
import { inFlightAccumulator } from './in-flight.js'
import { jobAccumulator } from './job-figures.js'
import { intervalsAccumulator } from './level-intervals.js'
import { type Measure, type MeasureKey, measureOf } from './measures.js'
import { networkAccumulator } from './network-figures.js'
import { openLoopAccumulator } from './open-loop-figures.js'
import { reasoningAccumulator, reasoningNotes } from './reasoning-figures.js'
import { sloAccumulator } from './slo.js'
import { SPECULATIVE_FIGURES } from './speculative-figures.js'
import { outputValidShare, structuredAccumulator } from './structured-figures.js'
import { turnAccumulator } from './turn-figures.js'
import {
  costOf,
  inputAccumulator,
  intendedAccumulator,
  outputAccumulator,
  scheduleAccumulator,
  tokenTotalsAccumulator,
} from './workload-figures.js'

/**
 * Every figure of a level, declared once, in the order a level's summary holds them: what each
 * field is and means, where it applies, how it is shown in the per-level table, and how it is had
 * (an accumulator fed each measured record once, or derived from the figures before it). Adding a
 * level figure is one entry here (and its line in docs/results.md, which a test holds to this list).
 */

/**
 * A figure of one field, from an accumulator whose result is that field's value: a null result
 * leaves the field out (for the figures absent when no request carried them).
 */
function into<K extends keyof LevelFigures>(
  key: K,
  make: (context: LevelContext) => Accumulator<NonNullable<LevelFigures[K]> | null>,
): (context: LevelContext) => Accumulator<Pick<LevelFigures, K>> {
  return (context) => {
    const fed = make(context)
    return accumulator(fed.add, () => ({ [key]: fed.result() ?? undefined }) as Pick<LevelFigures, K>)
  }
}

/** The fields that are one distribution. */
type DistributionKey = {
  [P in keyof LevelFigures]-?: LevelFigures[P] extends Distribution ? P : never
}[keyof LevelFigures]

/** A distribution of the values `of` gives each record `from` takes (every value a percentile needs is kept). */
function distribution<K extends DistributionKey>(
  key: K,
  from: (record: RequestRecord) => boolean,
  of: (record: RequestRecord, into: Samples, context: LevelContext) => void,
): (context: LevelContext) => Accumulator<Pick<LevelFigures, K>> {
  return into(key, (context) => {
    const samples = new Samples()
    return accumulator(
      (record) => {
        if (from(record)) of(record, samples, context)
      },
      () => samples.distribution(context.options.percentiles) as unknown as NonNullable<LevelFigures[K]>,
    )
  })
}

/** Over successful requests. */
const latency = <K extends DistributionKey>(key: K, of: (record: RequestRecord, into: Samples) => void) =>
  distribution(key, isOk, of)

/** Over every request, a failed one counting as the request timeout: a level cannot look fast by failing. */
const adjusted = <K extends DistributionKey>(key: K, of: (record: RequestRecord) => number | null) =>
  distribution(
    key,
    () => true,
    (record, samples, context) => samples.pushFigure(isOk(record) ? of(record) : context.options.timeoutMs),
  )

/** A measure's values in a record, by its own reader (measures.ts). */
const readerOf = (key: MeasureKey) => {
  const measure = measureOf(key) as Measure
  return (record: RequestRecord, into: Samples) => measure.read(record, into, null)
}

/**
 * A measure's column in the per-level table: its name and unit as measures.ts declares them (TTFT ms),
 * over the run's percentiles or its p50 alone; where it stands and its digits are the table's.
 */
function measureColumn(
  key: MeasureKey,
  shown: 'percentiles' | 'p50',
  place: Pick<ColumnSpec, 'order' | 'priority'> & { digits: number },
): ColumnSpec {
  const measure = measureOf(key) as Measure
  return {
    name: measure.name,
    head: `${measure.name} ${measure.unit}\n${shown === 'p50' ? 'p50' : '{percentiles}'}`,
    order: place.order,
    priority: place.priority,
    cell: { kind: shown, digits: place.digits },
  }
}

const TIMEOUT_KINDS = ['connect', 'first_token', 'idle', 'total'] as const

export const LEVEL_FIGURES: readonly AnyFigure[] = [
  figure({
    fields: {
      value: {
        unit: 'streams or requests/s',
        definition:
          "A level's value (levels[].value, saturation.value, capacity.value, meta.levels_run[].value): streams held " +
          'in concurrency mode (a closed loop), requests sent per second in request_rate mode (an open loop); mode ' +
          'beside it says which. llmbench.result/1 called it concurrency in both modes.',
      },
    },
    source: { derive: (context) => ({ value: context.value }) },
    columns: [
      {
        name: 'level',
        head: { terminal: '{level}', markdown: '{level}', html: '{level}' },
        order: 0,
        priority: 0,
        cell: { kind: 'level' },
      },
    ],
  }),
  figure({
    fields: { mode: { unit: 'concurrency or request_rate' } },
    source: { derive: (context) => ({ mode: context.mode }) },
  }),
  figure({
    fields: { requests: { unit: 'requests' } },
    source: { derive: (context) => ({ requests: context.tally.requests }) },
    columns: [
      {
        name: 'req',
        head: { terminal: 'req', markdown: 'requests', html: 'requests' },
        order: 1,
        priority: 1,
        cell: { kind: 'count' },
      },
    ],
  }),
  figure({
    fields: { ok: { unit: 'requests' } },
    source: { derive: (context) => ({ ok: context.tally.ok }) },
  }),
  figure({
    fields: { failed: { unit: 'requests' } },
    source: { derive: ({ tally }) => ({ failed: tally.requests - tally.ok }) },
  }),
  figure({
    fields: {
      success_rate: {
        unit: 'fraction',
        definition: 'ok / requests; failed requests are kept in the records with their error class.',
      },
    },
    source: {
      derive: ({ tally }) => ({
        success_rate: tally.requests === 0 ? 0 : round(tally.ok / tally.requests, 4),
      }),
    },
    columns: [{ name: 'success', head: 'success', order: 2, priority: 2, cell: { kind: 'percent' } }],
  }),
  figure({
    fields: { errors: { unit: 'requests by error class' } },
    source: {
      accumulator: () => {
        const errors = Object.fromEntries(ERROR_CLASSES.map((c) => [c, 0])) as Record<ErrorClass, number>
        return accumulator(
          (record) => {
            if (record.error !== null) errors[record.error.class]++
          },
          () => ({ errors }),
        )
      },
    },
  }),
  figure({
    fields: { error_samples: { unit: 'messages' } },
    source: {
      accumulator: () => {
        const samples: { class: ErrorClass; message: string }[] = []
        return accumulator(
          (record) => {
            const error = record.error
            if (error === null) return
            const sameClass = samples.filter((sample) => sample.class === error.class)
            if (sameClass.length < 3 && !sameClass.some((sample) => sample.message === error.message))
              samples.push({ class: error.class, message: error.message })
          },
          () => ({ error_samples: samples }),
        )
      },
    },
  }),
  figure({
    fields: {
      error_messages: { unit: 'messages with counts' },
      non_load_failures: {
        unit: 'object',
        definition:
          'Failed requests of the level whose cause is not load (a 4xx other than 408/429, an unreadable stream, a ' +
          'context-length error, an unreachable host before any answer): their count, cause, top message and what to ' +
          'change. At least half of the requests: the level is misconfigured; fewer: a note, not counted against the ' +
          'level (success_rate still counts them).',
      },
      misconfiguration: { unit: 'object' },
    },
    source: {
      accumulator: ({ tally, generates, options }) => {
        const groups = new FailureGroups(protocolOf(options.protocol).format)
        return accumulator(
          (record) => groups.add(record),
          () => groups.judge(tally.requests, tally.ok, tally.outputTokens, generates),
        )
      },
    },
  }),
  figure({
    fields: {
      embeddings: {
        unit: 'object',
        definition:
          'Embeddings runs (protocol embeddings), per level: inputs_per_s = texts embedded by successful requests (one ' +
          'per request) / level wall window, seconds; input_tokens_per_s = their usage.prompt_tokens / the same window. ' +
          'Not streamed and generating nothing, they have no TTFT, TPOT, ITL or output tokens/s: e2e_ms is their latency. ' +
          'AIPerf reports the same as request throughput and input sequence length.',
      },
    },
    applies: { generates: false, otherwise: 'absent' },
    source: {
      accumulator: into('embeddings', ({ tally }) => embeddingAccumulator(() => tally.durationS)),
    },
  }),
  figure({
    fields: { timeouts: { unit: 'requests by timeout kind' } },
    source: {
      accumulator: () => {
        const timeouts = Object.fromEntries(TIMEOUT_KINDS.map((kind) => [kind, 0])) as Record<
          (typeof TIMEOUT_KINDS)[number],
          number
        >
        return accumulator(
          (record) => {
            if (record.error?.class === 'timeout') timeouts[record.error.timeout ?? 'total']++
          },
          () => ({ timeouts }),
        )
      },
    },
  }),
  figure({
    fields: {
      ttft_ms: {
        unit: 'ms',
        definition:
          'Time to first token: from sending the request to the arrival of the first token-bearing SSE event ' +
          '(content, reasoning_content, refusal, text or a tool-call delta; role-only and empty chunks do not count). ' +
          'Same as vLLM, GuideLLM and AIPerf TTFT.',
      },
    },
    source: { accumulator: latency('ttft_ms', readerOf('ttft')) },
    columns: [measureColumn('ttft', 'percentiles', { order: 3, priority: 3, digits: 0 })],
  }),
  figure({
    fields: {
      tpot_ms: {
        unit: 'ms',
        definition:
          'Time per output token, first token excluded, per request: (e2e - ttft) / (output_tokens - 1); requests with ' +
          'fewer than 2 output tokens have none; reasoning tokens that usage counted and no event carried (hidden ' +
          'reasoning, see reasoning) came before the first token and are left out. Same as vLLM TPOT; GuideLLM and AIPerf call this inter-token latency (ITL).',
      },
    },
    source: { accumulator: latency('tpot_ms', readerOf('tpot')) },
    columns: [measureColumn('tpot', 'percentiles', { order: 5, priority: 6, digits: 1 })],
  }),
  figure({
    fields: {
      itl_ms: {
        unit: 'ms',
        definition:
          'Inter-token latency: every gap between consecutive token-bearing events of a request, pooled over requests. ' +
          'Same as vLLM per-gap ITL. One event may carry several tokens, so ITL >= TPOT when servers batch tokens per chunk.',
      },
    },
    source: {
      // From the level's token timeline (the event times it keeps for ITL per token and the steady window too).
      derive: ({ tally, options }) => ({
        itl_ms: summarizeSorted(tally.timeline.sortedGaps(), options.percentiles),
      }),
    },
    columns: [measureColumn('itl', 'p50', { order: 6, priority: 11, digits: 1 })],
  }),
  figure({
    fields: {
      e2e_ms: {
        unit: 'ms',
        definition:
          'End-to-end latency: from sending the request to the end of the response body, or to the arrival of ' +
          '`data: [DONE]` when it came: anything after [DONE] is ignored and counted as events_after_done, and a ' +
          'connection held open after it is closed by the client.',
      },
    },
    source: { accumulator: latency('e2e_ms', readerOf('e2e')) },
    columns: [measureColumn('e2e', 'p50', { order: 7, priority: 7, digits: 0 })],
  }),
  figure({
    fields: { ttft_ms_error_adjusted: { unit: 'ms' } },
    source: { accumulator: adjusted('ttft_ms_error_adjusted', ttftMs) },
  }),
  figure({
    fields: { e2e_ms_error_adjusted: { unit: 'ms' } },
    source: { accumulator: adjusted('e2e_ms_error_adjusted', e2eMs) },
  }),
  figure({
    fields: { slo: { unit: 'object' } },
    applies: { slos: true, otherwise: 'null' },
    source: {
      accumulator: into('slo', ({ options, tally }) =>
        sloAccumulator(options.slos, options.timeoutMs, () => tally.durationS, options.fluidity ?? null),
      ),
    },
    columns: [
      {
        name: 'SLO',
        head: 'SLO good %',
        order: 13,
        priority: 40,
        cell: { kind: 'slo-good' },
        surfaces: ['markdown'],
        whenPresent: true,
      },
    ],
  }),
  figure({
    fields: {
      output_tokens_per_s: {
        unit: 'tokens/s',
        definition:
          'Sum of output tokens of successful requests / level wall window (first send to last response end), seconds: ' +
          'the whole window, ramp-up and drain included.',
      },
    },
    source: { derive: ({ tally }) => ({ output_tokens_per_s: round(tally.rates().tokensPerS, 2) }) },
    columns: [{ name: 'tok/s', head: 'output\ntok/s', order: 8, priority: 4, cell: { kind: 'throughput' } }],
  }),
  figure({
    fields: {
      output_tokens_per_s_steady: {
        unit: 'tokens/s',
        definition:
          'Output tokens that arrived within the steady window / its length, seconds (a request straddling an edge counts ' +
          'the share of its token events inside); the same as output_tokens_per_s when the level has no steady window. ' +
          'The knee judges a step between two levels on this figure when both have a steady window, on ' +
          'output_tokens_per_s when either has none (never one against the other).',
      },
      steady_window: {
        unit: 'object',
        definition:
          'The part of a level where it held its streams: from the first moment at least 90% of its nominal concurrency ' +
          'was in flight and one request had completed (the synchronized first wave is start-up) to the last moment it ' +
          'fell below that (brief dips between one request and the next are inside), ' +
          "seconds after the level's first send, with the mean requests in flight over it. Null when the level never " +
          'held 90% of its streams, or held them for under a quarter of its window (then the whole window is used).',
      },
      achieved_concurrency: {
        unit: 'requests in flight',
        definition:
          'Requests in flight (sent, not yet ended) over the level wall window, from the records: time-averaged mean and ' +
          "maximum, and streams: what they were meant to hold (the level, or one shard's share of it). Below the nominal " +
          'concurrency when the level ramps up and drains, or had fewer requests than streams; the knee and verdicts ' +
          'scale by what was achieved.',
      },
    },
    source: {
      accumulator: ({ value, mode, options, tally }) => {
        const streams =
          options.shard == null ? value : (splitEvenly(value, options.shard.count)[options.shard.index] ?? 0)
        const inFlight = inFlightAccumulator(mode === 'request_rate' ? null : streams, tally.timeline)
        return accumulator(inFlight.add, () => {
          const figures = inFlight.result()
          return {
            output_tokens_per_s_steady:
              figures.steady?.output_tokens_per_s ?? round(tally.rates().tokensPerS, 2),
            steady_window: figures.steady,
            achieved_concurrency: figures.achieved,
          }
        })
      },
    },
  }),
  figure({
    fields: {
      intervals: {
        unit: 'object',
        definition:
          '95% confidence intervals of the level figures, with how each was had: {confidence, methods, ' +
          'output_tokens_per_s, output_tokens_per_s_steady, ttft_ms, tpot_ms, itl_ms, e2e_ms, effective_n}. methods ' +
          "names each family's method once: percentiles 'order-statistic', means 't', throughput 'slices-t'. " +
          'Throughput: {low, high, slices}, a Student t interval over up to 12 equal time slices of the level wall ' +
          'window (of the steady window for the steady figure; null without one). Latencies: {low, high} per run ' +
          'percentile ("p50") and for "mean". A percentile\'s is the order-statistic interval (distribution-free, exact ' +
          "binomial) and the mean's a Student t interval, each computed with an effective sample size instead of the " +
          'count: requests under load are not independent (a slow period slows many in a row), so n / (1 + 2 Σ ρ_k) ' +
          "from the autocorrelation of the series in send order (Geyer's initial positive sequence, at most 200 lags); " +
          'for a percentile, of the series of whether each request was at most it. effective_n holds each, keyed like ' +
          'the intervals. An end is null where the samples cannot bound it (p95 of fewer than ~60 requests has no ' +
          'upper end). Results of older versions have no methods, itl_ms, mean or effective_n (their intervals assumed ' +
          'independent requests).',
      },
    },
    source: { accumulator: intervalsAccumulator },
    columns: [
      {
        // Next to the TTFT percentiles where the width allows (`--wide` otherwise); every interval
        // is in summary.md's and report.html's intervals table.
        name: 'TTFT p50 95% CI',
        head: 'TTFT p50\n95% CI',
        order: 3.5,
        priority: 30,
        cell: { kind: 'interval', metric: 'ttft_ms', key: 'p50', digits: 0 },
        whenPresent: true,
      },
    ],
  }),
  figure({
    fields: {
      requests_per_s: { unit: 'requests/s', definition: 'Successful requests / level wall window, seconds.' },
    },
    source: { derive: ({ tally }) => ({ requests_per_s: round(tally.rates().requestsPerS, 3) }) },
    columns: [{ name: 'req/s', head: 'req/s', order: 9, priority: 9, cell: { kind: 'fixed', digits: 2 } }],
  }),
  figure({
    fields: { duration_s: { unit: 's' } },
    source: { derive: ({ tally }) => ({ duration_s: round(tally.durationS, 3) }) },
  }),
  figure({
    fields: {
      output_tokens: {
        unit: 'tokens',
        definition:
          'From the server usage (stream_options.include_usage) when sent, else counted with the offline tokenizer ' +
          '(o200k_base); token_counting says how many requests used each, and the mean tokenizer-vs-usage discrepancy. ' +
          'Usage is checked first: negative, fractional, far above max_tokens or far from the events and text received, ' +
          'it falls back to the tokenizer (token_counting.usage_rejected; the record keeps both).',
      },
    },
    source: { derive: ({ tally }) => ({ output_tokens: tally.outputTokens }) },
  }),
  figure({
    fields: { input: { unit: 'tokens' } },
    source: {
      accumulator: into('input', ({ options }) => inputAccumulator(options.images === true)),
    },
  }),
  figure({
    fields: { output: { unit: 'tokens' } },
    source: {
      accumulator: into('output', ({ options }) => outputAccumulator(options.percentiles)),
    },
  }),
  figure({
    fields: { ttft_ms_from_intended: { unit: 'ms' }, e2e_ms_from_intended: { unit: 'ms' } },
    applies: { mode: 'request_rate', otherwise: 'null' },
    source: { accumulator: ({ options }) => intendedAccumulator(options.percentiles) },
    columns: [
      {
        name: 'TTFT from intended',
        head: 'TTFT ms from\nintended {percentiles}',
        order: 4,
        priority: 10,
        cell: { kind: 'percentiles', digits: 0 },
        surfaces: ['terminal'],
        mode: 'request_rate',
      },
    ],
  }),
  figure({
    fields: { schedule: { unit: 'object' } },
    applies: { mode: 'request_rate', otherwise: 'null' },
    source: {
      accumulator: into('schedule', (context) =>
        scheduleAccumulator(() => ({
          arrivals: context.clientStats.arrivals ?? null,
          maxInFlight: context.clientStats.max_in_flight ?? null,
        })),
      ),
    },
  }),
  figure({
    fields: {
      open_loop: {
        unit: 'object',
        definition:
          "Request-rate mode: whether the server kept up with the arrivals, over the window from the level's first " +
          'measured completion to its last measured arrival (window_s; before it the level fills, after it it drains). ' +
          'offered_per_s = measured arrivals (intended times) in the window / window_s; served_per_s = successful ' +
          'completions in it / window_s, with served_per_s_low/high its 95% Poisson interval on the count; ' +
          'in_flight_first/last = time-averaged requests arrived and not yet ended over the first and last third of the ' +
          'window, in_flight_growth_low/high the 95% interval of their difference (each read as a Poisson count). ' +
          'Served below offered beyond its interval, or growth whose interval is above 0, makes the level overloaded. ' +
          'Null in concurrency mode, or when fewer than 8 arrivals fall in the window.',
      },
    },
    applies: { mode: 'request_rate', otherwise: 'null' },
    source: {
      accumulator: () => {
        const fed = openLoopAccumulator()
        return accumulator(fed.add, () => ({ open_loop: fed.result() }))
      },
    },
  }),
  figure({
    fields: { cost: { unit: 'object' } },
    applies: { pricing: true, otherwise: 'null' },
    source: {
      accumulator: ({ options }) => {
        const totals = tokenTotalsAccumulator()
        return accumulator(totals.add, () => ({
          cost: options.pricing == null ? null : costOf(totals.result(), options.pricing),
        }))
      },
    },
    columns: [
      {
        name: 'tokens',
        head: 'tokens in / out',
        order: 14,
        priority: 41,
        cell: { kind: 'cost-tokens' },
        surfaces: ['markdown'],
        whenPresent: true,
      },
      {
        name: 'cost',
        head: 'cost {currency}',
        order: 15,
        priority: 42,
        cell: { kind: 'cost-amount' },
        surfaces: ['markdown'],
        whenPresent: true,
      },
    ],
  }),
  figure({
    fields: { token_counting: { unit: 'requests' } },
    source: {
      accumulator: () => {
        const counting = {
          from_usage: 0,
          from_tokenizer: 0,
          discrepancySum: 0,
          discrepancyCount: 0,
          rejected: 0,
          extrapolated: 0,
        }
        return accumulator(
          (record) => {
            if (record.rejected_usage !== undefined) counting.rejected++
            if (record.tokenizer_sampled_chars !== undefined) counting.extrapolated++
            if (!isOk(record)) return
            if (record.token_source === 'tokenizer') {
              counting.from_tokenizer++
              return
            }
            counting.from_usage++
            // The text holds no hidden reasoning: the tokenizer is compared with the usage of what was streamed.
            const streamed = record.output_tokens - unstreamedReasoningTokens(record)
            if (record.tokenizer_output_tokens !== null && streamed > 0) {
              counting.discrepancySum += (record.tokenizer_output_tokens - streamed) / streamed
              counting.discrepancyCount++
            }
          },
          () => ({
            token_counting: {
              from_usage: counting.from_usage,
              from_tokenizer: counting.from_tokenizer,
              tokenizer_vs_usage_percent:
                counting.discrepancyCount === 0
                  ? null
                  : round((100 * counting.discrepancySum) / counting.discrepancyCount, 2),
              usage_rejected: counting.rejected,
              ...(counting.extrapolated === 0 ? {} : { extrapolated: counting.extrapolated }),
            },
          }),
        )
      },
    },
  }),
  figure({
    fields: {
      connections: {
        unit: 'requests',
        definition:
          'opened / reused: requests sent on a connection opened for them / kept alive. resent: requests whose first try ' +
          'died on a reused connection before any response byte (the server had closed it) and were resent at once on a ' +
          'new connection; the record is the resend. closed_by_server: connections the server closed right after a ' +
          'response without saying `connection: close`; once seen, connections are no longer reused.',
      },
    },
    source: {
      accumulator: into('connections', (context) =>
        connectionAccumulator(() => context.clientStats.connections?.closed_by_server),
      ),
    },
  }),
  figure({
    fields: {
      network: {
        unit: 'object',
        definition:
          'connect_ms: the TCP handshake of each connection opened for a measured request (h1 client; DNS not counted), ' +
          "ms: one network round trip plus the server kernel's accept, before the request was sent and so in no latency. " +
          'Absent when no connection was timed (every request on a kept-alive one, or records of older versions). The ' +
          "run's round trip (the knee's cause, the queue before the engine) is the least of these, or where the engine " +
          'reports its own time, the least client TTFT - server prefill over the levels (see in_band.queue_ms).',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('network', ({ options }) => networkAccumulator(options.percentiles)),
    },
  }),
  figure({
    fields: { events: { unit: 'object' } },
    definitions: {
      itl_per_token_ms:
        "Inter-token latency per token: each gap between token-bearing events divided by its request's tokens per " +
        'event (output_tokens / events). Equals itl_ms when every event carries one token.',
      tokens_per_event:
        'Output tokens / token-bearing SSE events over successful streamed requests. Above 1.2 (speculative decoding, ' +
        'batching proxies) the level notes that ITL is per event, not per token.',
    },
    source: {
      accumulator: into('events', ({ options, figures, tally }) =>
        eventAccumulator(options.percentiles, () => figures.itl_ms, tally.timeline),
      ),
    },
  }),
  figure({
    fields: {
      in_band: {
        unit: 'object',
        definition:
          "What the engine reported in its own responses, over a level's successful requests: server_prefill_ms = " +
          "llama.cpp's timings.prompt_ms; server_decode_ms_per_token = timings.predicted_ms / predicted_n; queue_ms = " +
          'client TTFT - timings.prompt_ms, the time before the engine started the prefill (HTTP layer, waiting for a ' +
          'slot, network) plus the first token on its way back; cached_prompt_share = cached prompt tokens (timings.cache_n, ' +
          'else usage.prompt_tokens_details.cached_tokens, else usage.prompt_tokens - timings.prompt_n on llama.cpp builds ' +
          'without cache_n) / prompt tokens, over the requests that said; reasoning_tokens ' +
          '= sum of usage.completion_tokens_details.reasoning_tokens. Absent when no request carried any of these.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('in_band', ({ options }) => inBandAccumulator(options.percentiles)),
    },
  }),
  figure({
    fields: {
      fluidity: {
        unit: 'object',
        definition:
          "levels[].fluidity, the fluidity index (Etalon, arXiv 2407.07000) over the level's requests: a request's index is " +
          'the share of its tokens that met their deadlines, the first due meta.fluidity.prefill_ms after the send and each ' +
          'later one meta.fluidity.decode_ms after the one before; a late token re-bases the schedule at its arrival, so a ' +
          "stall costs one miss. The deadlines are the run's own, the same at every level (meta.fluidity). A failed request " +
          'counts 0. requests, mean, p50, p90 (the index 90% of requests reach or exceed: the 10th percentile from below), ' +
          'all_on_time (share with every token on time). Absent without deadlines (no warm probes: --no-preflight) or a stream.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('fluidity', ({ options }) => fluidityAccumulator(options.fluidity ?? null)),
    },
  }),
  figure({
    fields: {
      structured: {
        unit: 'object',
        definition:
          'levels[].structured, with --response-schema or --tools, over the successful requests: schema = answers given ' +
          'as text checked against the schema (JSON.parse, then the schema): checked, valid, invalid, truncated (invalid ' +
          'and cut by max_tokens, finish_reason length), valid_share = valid / checked; tools = requests, the answers that ' +
          'called a tool (checked; call_share = checked / requests), calls, from_text (calls read from the answer text, an ' +
          'engine\'s unparsed {"tool_call": ...}), valid (every call named an offered function and its arguments validated ' +
          'against its parameters), invalid, truncated, valid_share, first_call_ms (send to the first tool-call delta, ' +
          'streamed answers). Absent without either.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('structured', ({ options }) => structuredAccumulator(options.percentiles)),
    },
  }),
  figure({
    fields: {
      output_valid_share: {
        unit: 'fraction',
        definition:
          'Of the answers checked (structured.schema and structured.tools together), the share valid; absent when nothing was checked.',
      },
    },
    absentWhenNull: true,
    source: {
      derive: ({ figures }) => ({ output_valid_share: outputValidShare(figures.structured) ?? undefined }),
    },
    columns: [
      { name: 'valid', head: 'valid', order: 11, priority: 6, cell: { kind: 'percent' }, whenPresent: true },
    ],
  }),
  figure({
    fields: {
      reasoning: {
        unit: 'object',
        definition:
          "levels[].reasoning, a reasoning model's two phases over a level's successful requests, present when any request " +
          'reasoned (reasoning events, or usage.completion_tokens_details.reasoning_tokens above 0). ttft_ms stays the first ' +
          'token of either phase. ttfr_ms: time to first reasoning token, send to the first event carrying reasoning_content ' +
          'or reasoning (only requests whose reasoning arrived as events). ttfo_ms: time to first output token, send to the ' +
          'first event carrying the answer (content, refusal, legacy text or a tool call); equals TTFT for a request that did ' +
          'not reason. AIPerf calls it Time to First Output (TTFO, metric time_to_first_output) and its migration notes call ' +
          "it GenAI-Perf's TTFT; GuideLLM reports it as time_to_first_output_token_ms; a TTFT that reads only delta.content (GuideLLM before " +
          'its issue 737, inference-perf per its issue 559) measures this instead of TTFT; genai-bench TTFT counts ' +
          'reasoning_content, like llmbench ttft_ms. ' +
          'reasoning_tokens: per request, usage.completion_tokens_details.reasoning_tokens when sent (source usage), else the ' +
          'reasoning events when the stream carried one token per event (usage.completion_tokens = events; source events), ' +
          'else the offline tokenizer on the reasoning text (source tokenizer), never above output_tokens; ' +
          'reasoning_token_sources counts requests per source. answer_tokens: output_tokens - reasoning tokens. ' +
          'answer_tpot_ms: (end - first answer token) / (answer_tokens - 1), requests with at least 2 answer tokens. ' +
          'reasoning_hidden: requests whose usage counted reasoning tokens while no reasoning event came (the server thinks ' +
          'without streaming it, as OpenAI o-series models): their TTFT includes the thinking, and a note says so; TPOT, ' +
          'tokens per event, the usage check and the tokenizer-vs-usage discrepancy leave those tokens out, and the ' +
          "comparisons of TTFT with the server's first token (outside_scheduler_ms, in_band.queue_ms, the knee's cause) " +
          'leave those requests out.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('reasoning', ({ options }) => reasoningAccumulator(options.percentiles)),
    },
    columns: [{ name: 'reasoning', head: '', order: 11, priority: 20, cell: { kind: 'reasoning-columns' } }],
  }),
  figure({
    fields: {
      turns: {
        unit: 'per turn index',
        definition:
          "levels[].turns, session runs (--sessions) only: per turn index (0 = a session's first request, whose prompt " +
          'carries no history), over successful measured requests: requests, ttft_p50_ms and ttft_p95_ms, input_tokens_mean (the ' +
          "server's prompt tokens: the history grows each turn), cached_tokens_mean and cached_share (cached prompt tokens, " +
          'counted as for in_band.cached_prompt_share, / prompt tokens). Others call this multi-turn or conversation figures.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('turns', () => turnAccumulator()),
    },
  }),
  figure({
    fields: {
      jobs: {
        unit: 'object',
        definition:
          'levels[].jobs, job runs (--jobs) only, over the measured records: complete (jobs whose every turn succeeded) and ' +
          'incomplete (a turn failed or was never sent); jct_p50_ms and jct_p90_ms, job completion time from the first turn sent to ' +
          "the last turn ended, tool waits included; jct_without_tools_p50_ms and jct_without_tools_p90_ms, the job graph's critical path with each " +
          "turn costing its own requests' time (no tool waits, no client lateness); input_tokens_per_job and " +
          "output_tokens_per_job (the server's prompt tokens summed over a complete job's turns: each carries its history; " +
          'output tokens likewise); jobs_per_hour (complete jobs over the level window); by_depth[] per turn depth (0 = a ' +
          "job's roots): requests, ttft_p50_ms and ttft_p90_ms, cached_share (cached prompt tokens / prompt tokens, as turns[]). Others " +
          'call these agentic or job-level figures.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('jobs', ({ tally }) => jobAccumulator(() => tally.durationS)),
    },
  }),
  figure({
    fields: {
      cache_effect: {
        unit: 'per cached-share bucket',
        definition:
          'levels[].cache_effect: successful requests bucketed by the share of their prompt served from the prefix cache ' +
          '([0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1]), each with requests, ttft_p50_ms and uncached_tokens_mean (the ' +
          'prompt tokens the prefill computed). Absent when no request had a cache hit.',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: into('cache_effect', () => cacheEffectAccumulator()),
    },
  }),
  ...SPECULATIVE_FIGURES,
  figure({
    fields: {
      cancellation: {
        unit: 'object',
        definition:
          'levels[].cancellation, with --cancel-share: the requests the client aborted on purpose by closing the ' +
          'connection once after_events token-bearing events had arrived (1 = at the first token), a user stopping a ' +
          'reply. Their own outcome: not in requests, ok or failed, and in no latency, throughput or token figure of ' +
          'the level. cancelled, share (of the requests sent: cancelled / (requests + cancelled)), after_events, ' +
          'ttft_ms (theirs: the first token came before the abort), output_tokens (received before the abort), ' +
          'forgone_tokens (max_tokens asked less received), and slots: whether the server freed them, from its ' +
          '/metrics: its running count plus waiting against the streams the client held, scrape by scrape ' +
          '(excess_median, excess_max, scrapes; concurrency mode), and its generated-tokens counter against the ' +
          'tokens the client received (unread_tokens: half of forgone_tokens or more = it decoded on for no one). ' +
          'verdict not_freed when either reading says so, else freed when either does, else cannot_tell; reason ' +
          'in words. Absent when nothing was cancelled.',
      },
    },
    absentWhenNull: true,
    takesCancelled: true,
    source: {
      accumulator: into('cancellation', ({ options, tally }) =>
        cancellationAccumulator(options.percentiles, () => tally.requests),
      ),
    },
  }),
  figure({
    fields: {
      cancelled: {
        unit: 'requests',
        definition:
          'levels[].cancelled: cancellation.cancelled, for the table; absent when nothing was cancelled.',
      },
    },
    absentWhenNull: true,
    source: { derive: ({ figures }) => ({ cancelled: figures.cancellation?.cancelled }) },
    columns: [
      {
        name: 'cancelled',
        head: 'cancel',
        order: 2,
        priority: 6,
        cell: { kind: 'count' },
        whenPresent: true,
      },
    ],
  }),
  figure({
    fields: {
      notes: {
        unit: 'sentences',
        definition:
          "What a level's records say about the server's stream and connections, in words (resends, closes after " +
          'responses, tokens per event, events after [DONE], usage not trusted); client.notes is about the client.',
      },
    },
    source: {
      derive: ({ figures }) => ({
        notes: [
          ...(figures.connections === undefined ? [] : connectionNotes(figures.connections)),
          ...(figures.events === undefined
            ? []
            : eventNotes(figures.events, figures.token_counting?.usage_rejected ?? 0)),
          ...reasoningNotes(figures.reasoning),
        ],
      }),
    },
  }),
  figure({
    fields: { client: { unit: 'object' } },
    source: {
      accumulator: (context) => {
        const lateness = new Samples()
        let e2eSum = 0
        let e2eCount = 0
        let fdLimited = 0
        return accumulator(
          (record) => {
            lateness.push(record.sent_at - record.scheduled_at)
            if (hitClientFdLimit(record)) fdLimited++
            if (!isOk(record)) return
            e2eSum += e2eMs(record)
            e2eCount++
          },
          () => {
            const client = judgeClient(
              context.clientStats,
              context.mode === 'request_rate' ? null : dispatchOf(lateness, e2eSum, e2eCount),
            )
            const fdLimit = fdLimitReason(fdLimited)
            if (fdLimit !== null) {
              client.reasons.push(fdLimit)
              client.bound = true
            }
            return { client }
          },
        )
      },
    },
    columns: [
      {
        name: 'client loop',
        head: 'client\nloop busy / p99',
        order: 12,
        priority: 30,
        cell: { kind: 'client-loop' },
        surfaces: ['terminal'],
      },
    ],
  }),
  figure({
    fields: {
      server: {
        unit: 'object',
        definition:
          "The server's own figures over a level, from its Prometheus /metrics scraped during the run (server-metrics.jsonl), " +
          "mapped from the engine's names (vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM/Dynamo, DCGM) to one vocabulary. " +
          'Gauges (running, waiting, kv_cache_usage 0..1, gpu_*): mean and max over the scrapes inside the steady window ' +
          '(every stream in flight) when each URL answered there, else over those inside the measured window (gauges_over: ' +
          'steady or measured); the first wave arriving and the last requests draining say little of the level. ' +
          'Counters (prompt_tokens, generation_tokens, preemptions, gpu_energy_joules): increase over the measured window ' +
          'only (warm-up and cool-down outside it left out): exact between the first and last scrapes inside it, each ' +
          'edge counted at the rate inside (capped at what the scrapes around the edge saw), or read at the edges by ' +
          'linear interpolation with fewer than two scrapes inside; a drop read as a restart. Histograms: increase from ' +
          'the last scrape answered before the window to the first sent after it (span_s). cache_hit_rate: ' +
          "prefix-cache hits / queries over the level, else the mean of the engine's own rate. Several URLs are added " +
          '(fractions averaged). scrapes/gaps: answered/failed scrapes inside the window.',
      },
    },
    definitions: {
      server_bucketed:
        "ttft_ms_bucketed, queue_time_ms_bucketed, e2e_ms_bucketed, itl_ms_bucketed: the increase of the server's " +
        'histogram over the level; percentiles interpolated linearly inside the bucket holding the rank (Prometheus ' +
        'histogram_quantile), so only as precise as the bucket bounds, and cut at mean / (1 - q), above which no ' +
        'q-quantile of a non-negative quantity can be; the mean is exact (sum / count). ranges: for percentiles whose ' +
        'bucket is at least as wide as the estimate, {low, high} (the bucket, its top cut at that bound), shown instead.',
      outside_scheduler_ms:
        "Time outside the engine's scheduler: the client's TTFT p50 minus the server's TTFT p50 (bucket-interpolated): " +
        'network, the HTTP layer and its queue, and the client. Null unless the server publishes a TTFT histogram.',
      joules_per_output_token:
        "server.joules_per_output_token: the GPUs' mean power inside the measured window (DCGM) times its length, over " +
        "the level's output tokens; from the energy counter's increase over the window when there is no power gauge.",
    },
    source: { from: 'server-metrics' },
    columns: [{ name: 'server', head: '', order: 10, priority: 20, cell: { kind: 'server-columns' } }],
  }),
  figure({
    fields: {
      interrupted: {
        unit: 'boolean',
        definition:
          'True when an interrupt (Ctrl-C, SIGTERM) cut the level short: it is shown, not judged (verdict interrupted) and ' +
          'not used for the knee; absent otherwise.',
      },
    },
    source: { from: 'judgement' },
  }),
  figure({
    fields: {
      precision: {
        unit: 'object',
        definition:
          'With --precision: the level sent past requests_per_level (its floor) until each named figure was that precise, or ' +
          'a ceiling came. floor, max_requests, max_duration_s (null = none); figures: per named figure its key (ttft_p95, tput), ' +
          'target_pct, value (ms or tokens/s), reached_pct (the half-width of its 95% interval in percent of the figure; null ' +
          'while the samples cannot bound it) and met; met (all of them); stopped_by: precise, max_requests, max_duration, ' +
          'out_of_reach (the spread so far said no ceiling would be enough; levels sized by default only) or interrupted; requests (measured requests sent). Percentiles are judged on the same interval as intervals (order-statistic, ' +
          'widened by the effective sample size), tput on the t interval over time slices up to the last end less the longest request. ' +
          'Absent without --precision.',
      },
    },
    source: { from: 'run' },
  }),
  figure({
    fields: {
      verdict: { unit: 'healthy, saturated, overloaded, client-bound, misconfigured or interrupted' },
    },
    source: { from: 'judgement' },
    columns: [{ name: 'verdict', head: 'verdict', order: 16, priority: 5, cell: { kind: 'verdict' } }],
  }),
  figure({
    fields: { advice: { unit: 'sentence' } },
    source: { from: 'judgement' },
  }),
]

/** The client's dispatch figures: how late requests went out, against how long they took. */
function dispatchOf(lateness: Samples, e2eSum: number, e2eCount: number) {
  if (lateness.length === 0 || e2eCount === 0) return null
  const sorted = lateness.sorted()
  let sum = 0
  for (const value of sorted) sum += value
  return {
    lateness_p99_ms: percentileOfSorted(sorted, 99) as number,
    lateness_mean_ms: sum / sorted.length,
    e2e_mean_ms: e2eSum / e2eCount,
  }
}
