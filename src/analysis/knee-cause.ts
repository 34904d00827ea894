/**
 * Why the knee is where it is, from what the server recorded at the knee and past it. The client
 * only sees that throughput stopped growing and TTFT climbed; the server's own figures say which
 * resource ran out: the KV cache, the batch slots, something before the engine's scheduler (an HTTP
 * thread pool, a proxy), prefill stalling decode, or the client itself. Each cause names the setting
 * to look at. Without server figures the answer is "not enough server data", never a guess.
 */

import { type Engine, engineSetting } from './engine-settings.js'
import { describeRoundTrip, type RoundTrip } from './network.js'

/** One level as the server saw it; null where the server did not say. */
export interface LevelServerView {
  value: number
  /** The client's own figures. */
  client_ttft_p50_ms: number | null
  itl_p99_ms: number | null
  client_bound: boolean
  /** From the server's histograms (bucket-interpolated). */
  server_ttft_p50_ms: number | null
  /**
   * From the streams' own timings: client TTFT minus the server's prefill time, per request. It
   * holds the network's round trip: explainKnee takes the run's out before reading it as a queue.
   */
  queue_before_engine_p50_ms: number | null
  running_max: number | null
  running_mean: number | null
  waiting_mean: number | null
  /** Requests the client held open, time-averaged over the level (its achieved concurrency). */
  in_flight_mean: number | null
  kv_usage_max: number | null
  preemptions: number | null
}

export type KneeCauseKind =
  | 'client-bound'
  | 'kv-cache'
  | 'outside-scheduler'
  | 'batch-slots'
  | 'prefill-interference'
  | 'undetermined'
  | 'no-server-data'

export interface KneeCause {
  kind: KneeCauseKind
  /** The figures that point at it. */
  evidence: string
  /** What to change or look at. */
  setting: string
}

/** KV-cache use at or above this is full: new sequences wait or are preempted. */
const KV_FULL = 0.95
/** Below this the KV cache has room: a plateau is not the cache's doing. */
const KV_ROOM = 0.9
/** TTFT spent before the engine, as a share of the client's TTFT, that makes it the bottleneck... */
const OUTSIDE_SHARE = 0.5
/** ... and at least this much of it, so a fast server's few ms of network are not called a queue. */
const OUTSIDE_MIN_MS = 50
/**
 * An engine queue shorter than this on average is empty for the purpose of blaming it. A longer one
 * is still not where requests wait when more of them wait in front of the engine: llama.cpp's HTTP
 * pool hands the engine up to (its threads - slots) requests it defers, and holds the rest itself.
 */
const EMPTY_QUEUE = 1
/** ITL p99 past the knee at least this many times the knee's: decode is being stalled by prefills. */
const ITL_STALL = 1.5

/** What the run knows beside its levels: the server's own description and the network between. */
export interface KneeContext {
  /** The server's batch size when it said so (llama.cpp's slots; vLLM's max-num-seqs is not exposed). */
  slots?: number | null
  /** The engine it said it is: each cause names that engine's own flags; null names every engine's. */
  engine?: Engine | null
  /** The run's measured round trip (analysis/network.ts): in every client-minus-server time, never a queue. */
  roundTrip?: RoundTrip | null
}

/**
 * The cause of the knee at `knee`, judged on the first level past it (the knee itself when it is the
 * last level): that is where the extra load met the limit.
 */
export function explainKnee(
  levels: readonly LevelServerView[],
  knee: number,
  { slots = null, engine = null, roundTrip = null }: KneeContext = {},
): KneeCause {
  const sorted = [...levels].sort((a, b) => a.value - b.value)
  const at = sorted.find((level) => level.value === knee)
  if (at === undefined) return undetermined('the knee level has no figures')
  const past = sorted.find((level) => level.value > knee) ?? at
  const name = past === at ? `at ${knee}` : `from ${knee} to ${past.value}`

  if (at.client_bound || past.client_bound)
    return {
      kind: 'client-bound',
      evidence: `the client was the bottleneck ${name} (its own CPU or event loop)`,
      setting: 'more load generators: another machine, or shards (--shard / llmbench k8s-manifest)',
    }
  if (!hasServerData(at) && !hasServerData(past))
    return {
      kind: 'no-server-data',
      evidence: 'not enough server data: no /metrics figures or stream timings at the knee',
      setting: engineSetting('metrics', engine),
    }

  const kv = past.kv_usage_max
  const preempted = (past.preemptions ?? 0) > 0
  if ((kv !== null && kv >= KV_FULL) || preempted)
    return {
      kind: 'kv-cache',
      evidence: `KV cache full ${name}${kv === null ? '' : ` (use up to ${percent(kv)})`}${preempted ? `, ${past.preemptions} preemption(s)` : ''}`,
      setting: `KV-cache memory: ${engineSetting('kv-cache', engine)}`,
    }

  const outside = outsideSchedulerMs(past, roundTrip)
  const ttft = past.client_ttft_p50_ms
  const waitingOutside = waitingBeforeEngine(past)
  const engineHoldsTheWait =
    past.waiting_mean !== null &&
    past.waiting_mean >= EMPTY_QUEUE &&
    (waitingOutside === null || past.waiting_mean >= waitingOutside)
  if (
    outside !== null &&
    ttft !== null &&
    ttft > 0 &&
    outside >= OUTSIDE_MIN_MS &&
    outside >= OUTSIDE_SHARE * (ttft - (roundTrip?.ms ?? 0)) &&
    !engineHoldsTheWait
  )
    return {
      kind: 'outside-scheduler',
      evidence:
        `requests wait before the engine ${name}: ${round(outside)} ms of the ${round(ttft)} ms TTFT p50 ` +
        `is spent outside its scheduler${networkWords(roundTrip)}${engineQueueWords(past.waiting_mean, waitingOutside)}` +
        (slots === null ? '' : ` (${slots} slots)`),
      setting: engineSetting('before-engine', engine),
    }

  const plateau =
    at.running_max !== null &&
    past.running_max !== null &&
    past !== at &&
    past.running_max <= at.running_max &&
    (slots === null || at.running_max >= slots)
  const waitingGrew = (past.waiting_mean ?? 0) > (at.waiting_mean ?? 0)
  if (plateau && waitingGrew && (kv === null || kv < KV_ROOM))
    return {
      kind: 'batch-slots',
      evidence: `running requests flat at ${at.running_max} ${name} while the engine's queue grew${kv === null ? '' : ` and the KV cache had room (${percent(kv)})`}`,
      setting: engineSetting('batch-size', engine),
    }

  if (at.itl_p99_ms !== null && past.itl_p99_ms !== null && past.itl_p99_ms >= ITL_STALL * at.itl_p99_ms)
    return {
      kind: 'prefill-interference',
      evidence: `inter-token latency p99 rose from ${round(at.itl_p99_ms)} to ${round(past.itl_p99_ms)} ms ${name}: prefills stall the decoding streams`,
      setting: engineSetting('prefill-chunking', engine),
    }
  return undetermined(`the server figures ${name} do not single out a resource`)
}

/**
 * Time before the engine that is not the network: the streams' own timings first, else client TTFT
 * minus the server's histogram; either less the run's round trip, which a request spends at any load.
 */
function outsideSchedulerMs(level: LevelServerView, roundTrip: RoundTrip | null): number | null {
  const gross =
    level.queue_before_engine_p50_ms ??
    (level.client_ttft_p50_ms === null || level.server_ttft_p50_ms === null
      ? null
      : level.client_ttft_p50_ms - level.server_ttft_p50_ms)
  return gross === null ? null : Math.max(0, gross - (roundTrip?.ms ?? 0))
}

function networkWords(roundTrip: RoundTrip | null): string {
  return roundTrip === null || roundTrip.ms < 1 ? '' : `, beyond a ${describeRoundTrip(roundTrip)}`
}

/** Requests open at the client that the engine neither ran nor queued, on average; null when unknown. */
function waitingBeforeEngine(level: LevelServerView): number | null {
  if (level.in_flight_mean === null || level.running_mean === null || level.waiting_mean === null) return null
  return Math.max(0, level.in_flight_mean - level.running_mean - level.waiting_mean)
}

function engineQueueWords(waiting: number | null, waitingOutside: number | null): string {
  if (waiting === null) return ''
  // Worded from the gauge: a mean of 0.67 is not an empty queue, only one too short to blame.
  if (waiting === 0) return ' while its own queue stayed empty (waiting 0 on average)'
  if (waiting < EMPTY_QUEUE) return ` while its own queue held ${waiting.toFixed(2)} requests on average`
  return ` while its own queue held ${waiting.toFixed(1)} requests on average and ${(waitingOutside ?? 0).toFixed(1)} waited in front of it`
}

function hasServerData(level: LevelServerView): boolean {
  return (
    level.server_ttft_p50_ms !== null ||
    level.queue_before_engine_p50_ms !== null ||
    level.running_max !== null ||
    level.waiting_mean !== null ||
    level.kv_usage_max !== null ||
    level.preemptions !== null
  )
}

function undetermined(evidence: string): KneeCause {
  return {
    kind: 'undetermined',
    evidence,
    setting: 'compare the server figures per level (running, waiting, KV cache, server TTFT)',
  }
}

const round = (ms: number): string => ms.toFixed(0)
const percent = (share: number): string => `${(share * 100).toFixed(0)}%`
