import type { RunConfig } from '../../config/types.js'
import { priceTokens } from '../../metrics/workload-figures.js'
import type { CostEstimate } from '../../result/run-meta.js'
import { levelRequestBudget, preciseHold } from '../level/precision-watch.js'
import { CONTROL_RUN_SHARE } from './control-size.js'
import { CONTROL_MIN_SECONDS, levelValues, plansControl, timedLevelSeconds } from './level-plan.js'
import { PAIRS_PER_LEVEL, pairedLevelRequests } from './paired-blocks.js'

/** One request's projected seconds: the probes' median, and the range their spread allows. */
export interface RequestSeconds {
  median: number
  low: number
  high: number
  /**
   * The part of it that is prefill proportional to the prompt (the length probe's rate × the planned
   * length): concurrent requests share the server's compute for it, so it adds up request by request.
   * Absent = unknown, taken as 0 (every request overlaps fully).
   */
  prefill_s?: number
}

/**
 * What a run spends besides its levels, seconds: the drift control (a short repeat of the first
 * level), and the end of the run (the result, the model's fit and its charts). The plan's time range
 * left them out and never held the real time (issue 36).
 */
const END_OF_RUN_S = { fast: 0, point: 2, slow: 8 } as const

export interface EstimateInputs {
  /** Mean requested lengths of the planned prompts. */
  input_mean: number
  output_mean: number
  /**
   * A closed-loop timed level sends as many requests as its streams finish: projected from one
   * request's end-to-end time (the warm probes', scaled to the planned output; see probe-timing.ts).
   * A number is a single figure (no range). Null = unknown.
   */
  request_seconds: number | RequestSeconds | null
  /** This process's share of the load (shards): 1 for a whole run. */
  share: number
  /** --trace: the rows replayed at every level; null or absent = no trace. */
  trace_rows?: number | null
  /** --trace: the rows' span at speed 1, seconds (for the duration). */
  trace_span_s?: number | null
  /** The slots the server declared (its self-description); null or absent = unknown. */
  slots?: number | null
}

/** What a level's length is projected from: one request's seconds, its prefill part, the trace replayed. */
export interface RequestCost {
  request_s: number
  /** The prefill part of request_s, which concurrent requests do not overlap; absent = 0. */
  prefill_s?: number
  /** --trace: the rows replayed per level and their span at speed 1; null = no trace. */
  trace?: { rows: number; span_s: number } | null
  /** The slots the server declared; null or absent = unknown. */
  slots?: number | null
  /**
   * Which end of the plan's range: `fast`, no queueing and a --precision level precise from its floor;
   * `slow`, one request at a time (a busy CPU nearly serves so) and a --precision level run to its
   * ceiling; `point` (absent), the declared slots and midway between the two for --precision levels.
   */
  end?: 'fast' | 'point' | 'slow'
}

export function estimateRun(config: RunConfig, inputs: EstimateInputs): CostEstimate | null {
  const seconds = asRange(inputs.request_seconds)
  const count = (requestSeconds: number | null) => plannedRequests(config, inputs, requestSeconds)
  const planned = count(seconds?.median ?? null)
  if (planned === null) return null
  const inputTokens = planned.requests * inputs.input_mean
  const outputTokens = planned.requests * inputs.output_mean
  const prices = config.pricing
  const estimate: CostEstimate = {
    requests: planned.requests,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cost: prices === null ? null : priceTokens(inputTokens, outputTokens, prices),
    currency: prices?.currency ?? null,
    basis: planned.basis,
  }
  if (seconds === null) return estimate
  // Slower requests: fewer of them in a timed window, and a longer run.
  const fewest = count(seconds.high)?.requests ?? planned.requests
  const most = count(seconds.low)?.requests ?? planned.requests
  if (most !== fewest) {
    estimate.requests_range = [fewest, most]
    if (prices !== null)
      estimate.cost_range = [fewest, most].map((n) =>
        priceTokens(n * inputs.input_mean, n * inputs.output_mean, prices),
      ) as [number, number]
  }
  const trace =
    inputs.trace_rows == null || inputs.trace_span_s == null
      ? null
      : { rows: inputs.trace_rows, span_s: inputs.trace_span_s }
  const slots = inputs.slots ?? null
  // The fast end lets prefills overlap as well (a GPU batches them; the probes' prefill rate is
  // also for a prompt the calibration may still shorten).
  const duration = (s: number, end: 'fast' | 'point' | 'slow') =>
    runSeconds(config, {
      request_s: s,
      prefill_s: end === 'fast' ? 0 : (seconds.prefill_s ?? 0),
      trace,
      slots,
      end,
    }) + END_OF_RUN_S[end]
  estimate.duration_s = duration(seconds.median, 'point')
  estimate.duration_s_range = [duration(seconds.low, 'fast'), duration(seconds.high, 'slow')]
  estimate.request_seconds = seconds
  return estimate
}

function asRange(seconds: EstimateInputs['request_seconds']): RequestSeconds | null {
  if (seconds === null || (typeof seconds === 'number' ? seconds : seconds.median) <= 0) return null
  return typeof seconds === 'number' ? { median: seconds, low: seconds, high: seconds } : seconds
}

function plannedRequests(
  config: RunConfig,
  inputs: EstimateInputs,
  requestSeconds: number | null,
): { requests: number; basis: string } | null {
  const { load } = config
  const values = levelValues(config)
  let requests = 0
  let basis: string
  const windowS = timedLevelSeconds(load)
  if (inputs.trace_rows != null) {
    requests = values.length * inputs.trace_rows
    basis = `${values.length} speeds × ${inputs.trace_rows} trace rows`
  } else if (load.requests_per_level !== null && config.run.paired) {
    const perLevel = load.requests_per_level
    requests = values.reduce((sum, streams) => sum + pairedLevelRequests(perLevel, streams), 0)
    basis = `${values.length} levels × 2 targets × ${PAIRS_PER_LEVEL} blocks (--paired)`
  } else if (load.requests_per_level !== null) {
    // --precision: the ceiling, so a cost limit holds whatever the precision asks.
    const budget = levelRequestBudget(load) ?? load.requests_per_level
    requests = values.length * budget
    basis =
      budget === load.requests_per_level
        ? `${values.length} levels × ${budget} requests`
        : `${values.length} levels × at most ${budget} requests (--precision's ceiling; at least ${load.requests_per_level})`
  } else if (load.mode === 'request_rate') {
    requests = values.reduce((sum, rate) => sum + Math.ceil(rate * windowS), 0)
    basis = `rates × ${windowS} s per level`
  } else {
    if (requestSeconds === null || requestSeconds <= 0) return null
    const perStream = Math.ceil(windowS / requestSeconds)
    requests = values.reduce((sum, streams) => sum + streams * perStream, 0)
    basis = `projected: streams × ${windowS} s / ${requestSeconds.toFixed(2)} s per request (no queueing; an upper bound while the server keeps up)`
  }
  // A shard runs its share of both the measured requests and the warm-up.
  // --repeat runs every level, warm-up included, that many times.
  requests = Math.ceil((requests + values.length * load.warmup_requests) * inputs.share * load.repeat)
  basis += ` + ${load.warmup_requests} warm-up per level${load.repeat > 1 ? `, × ${load.repeat} runs (--repeat)` : ''}`
  return { requests, basis }
}

/**
 * One level's seconds with requests of `requestSeconds` and no queueing: a timed level's windows
 * plus its warm-up round and the drain of its last requests; a counted closed-loop level's requests
 * in rounds of its streams; a counted open-loop level's arrivals. `prefillS` of each request is
 * prefill, which concurrent requests do not overlap (prefill is compute-bound: a second prompt
 * waits for, or shares the compute of, the first), so n requests take at least n × prefillS: closed,
 * n × prefillS + their rounds × the rest; open, the arrivals' span or n × prefillS, the longer. A
 * server that queues otherwise makes the counted levels longer: the figure is a floor for them,
 * close for timed ones.
 */
export function levelSeconds(config: RunConfig, value: number, cost: RequestCost): number {
  const { load } = config
  const requestSeconds = cost.request_s
  const prefill = Math.min(Math.max(0, cost.prefill_s ?? 0), requestSeconds)
  const end = cost.end ?? 'point'
  const parallel = (streams: number): number =>
    end === 'slow' ? 1 : end === 'fast' ? streams : Math.max(1, Math.min(streams, cost.slots ?? streams))
  const closed = (n: number, streams: number): number =>
    n * prefill + Math.ceil(n / parallel(streams)) * (requestSeconds - prefill)
  // The requests in flight when a timed level stops issuing: they finish before the next level.
  const drain = (streams: number): number => closed(Math.min(streams, load.max_in_flight ?? streams), streams)
  const open = (n: number, spanS: number): number => Math.max(spanS, n * prefill) + requestSeconds
  if (config.workload.trace !== null)
    return cost.trace == null ? requestSeconds : open(cost.trace.rows, cost.trace.span_s / value)
  const rateMode = load.mode === 'request_rate'
  // n random arrivals span n / rate on average, give or take about √n / rate: the range's ends
  // take two of those (a fixed schedule has no spread).
  const spread = load.arrival === 'constant' ? 0 : 2
  const span = (n: number): number =>
    Math.max(0, n + (end === 'fast' ? -spread : end === 'slow' ? spread : 0) * Math.sqrt(n)) / value
  const counted = (n: number): number => (rateMode ? open(n, span(n)) : closed(n, value))
  const warmup = load.warmup_requests === 0 ? 0 : counted(load.warmup_requests)
  if (load.requests_per_level === null) return warmup + timedLevelSeconds(load) + drain(value)
  // --precision: as long as the ceiling (max_duration, or max_requests), the most the level can take.
  // --paired: both targets' blocks, each warmed up once.
  // --paired-mode together: both at once, so each target's blocks take the time of one target's.
  if (config.run.paired) {
    const pairedRequests = pairedLevelRequests(load.requests_per_level, value)
    return config.run.paired_mode === 'together'
      ? warmup + counted(pairedRequests / 2)
      : 2 * warmup + counted(pairedRequests)
  }
  if (load.precision === null) return warmup + counted(load.requests_per_level)
  // --precision: at least the floor and the records a figure must stay precise over before the level
  // stops (a round of the streams, a few at least: precision-watch.ts), at most the ceiling
  // (max_requests, or max_duration and the drain).
  const most = levelRequestBudget(load) ?? load.requests_per_level
  const floor = counted(Math.min(load.requests_per_level + preciseHold(value), most))
  const budget = counted(most)
  const ceiling = Math.min(
    budget,
    load.max_duration_per_level_s === null ? budget : load.max_duration_per_level_s + drain(value),
  )
  // A time cap shorter than the floor's requests ends the level first, fast or slow.
  const fast = Math.min(floor, ceiling)
  return warmup + (end === 'fast' ? fast : end === 'slow' ? ceiling : (fast + ceiling) / 2)
}

/** The whole run's seconds: every level, back to back. */
export function runSeconds(config: RunConfig, cost: RequestCost): number {
  const values = levelValues(config)
  const once = values.reduce((sum, value) => sum + levelSeconds(config, value, cost), 0)
  const levels = once * config.load.repeat
  return levels + controlSeconds(config, values, cost, levels)
}

/**
 * The drift control: the first level again after the last, at most a third of its requests (sized
 * by need at run time, plan/control-size.ts), timed: at most as long as the first level took and a
 * tenth of the levels' time; where the run plans one.
 */
function controlSeconds(
  config: RunConfig,
  values: readonly number[],
  cost: RequestCost,
  levelsSeconds: number,
): number {
  const first = values[0]
  if (!plansControl(config) || values.length < 2 || first === undefined) return 0
  const level = levelSeconds(config, first, cost)
  const cap = Math.max(CONTROL_MIN_SECONDS, CONTROL_RUN_SHARE * levelsSeconds)
  // The slow end may run to its cap; the others a third of the level.
  return Math.min(cap, cost.end === 'slow' ? Math.max(CONTROL_MIN_SECONDS, level) : Math.max(1, level / 3))
}

export function describeEstimate(estimate: CostEstimate): string {
  // A range is shown when the probes' spread moves the figure as it is printed.
  const range = (r: [number, number] | undefined, show: (n: number) => string) =>
    r === undefined || show(r[0]) === show(r[1]) ? '' : ` (${show(r[0])}–${show(r[1])})`
  const cost =
    estimate.cost === null
      ? ''
      : `, estimated cost ${estimate.cost.toFixed(4)}${range(estimate.cost_range, (n) => n.toFixed(4))} ${estimate.currency}`
  const requests = `${estimate.requests}${range(estimate.requests_range, String)} requests`
  const duration =
    estimate.duration_s == null
      ? ''
      : `\nplan: about ${formatDuration(estimate.duration_s)}${range(estimate.duration_s_range, formatDuration)} for the whole run, ` +
        "from the warm probes, with the drift control (at most a tenth of the levels' time, 5 s at least) and the report (the range: no queueing at the server to one request at a time)"
  return (
    `plan: ${requests}, ~${estimate.input_tokens} input and ≤${estimate.output_tokens} output tokens` +
    `${cost} (${estimate.basis})${duration}`
  )
}

/** "45 s", "7 min 40 s", "1 h 05 min" */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}
