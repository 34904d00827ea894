/**
 * The protocol between `llmbench coordinate` and the shards that reach it (`run --shard I/N
 * --coordinator URL`), over plain HTTP/1.1 with JSON bodies (docs/commands.md#coordinate describes it):
 *
 *   GET  /time?t0=MS          → { received_ms, sent_ms }  the coordinator's clock, for the offset
 *   POST /register  Register  → { ok } | 409 { error }     after the offset is measured
 *   GET  /events?shard=I      → NDJSON stream of Event     held open for the shard's life: its close is a death
 *   POST /heartbeat { shard } → { ok }                     every HEARTBEAT_MS
 *   POST /ready     Ready     → { ok }                     this shard may start level `level`
 *   POST /done      Done      → { ok }                     this shard's part of the level ended
 *   POST /finish    { shard } → { ok }                     no more levels from this shard (before its report)
 *   GET  /status              → CoordinationReport so far (for people and tests; shards never ask)
 *
 * Every time in a body is on the coordinator's clock (ms since the epoch), except t0 and the shard's
 * own reading of the exchange.
 */

/**
 * A shard with no heartbeat for this long is lost. A process that dies closes its events stream, which
 * says so at once; the heartbeat is for a host cut off. Generous: a shard's main thread may be busy
 * summarizing for a second or two on a loaded host.
 */
export const HEARTBEAT_MS = 250
export const DEAD_AFTER_MS = 10_000
/** Exchanges of /time per measurement, CLOCK_GAP_MS apart: the one with the shortest round trip is kept. */
export const CLOCK_SAMPLES = 16
export const CLOCK_GAP_MS = 10
/** A level starts at least this long after the last shard said it was ready: time for the start to reach all. */
export const MIN_LEAD_MS = 250

export interface Register {
  shard: number
  count: number
  host: string
  /** Shards of one run share it (run/plan/config-digest.ts). */
  config_digest: string
  /** coordinator − shard, ms: coordinator time = shard time + offset. */
  offset_ms: number
  /** The offset is within ± this (half the best round trip). */
  bound_ms: number
  rtt_ms: number
}

export interface Ready {
  shard: number
  /** 0-based index of the level in the run. */
  level: number
  value: number
}

export interface Done {
  shard: number
  level: number
  /** When this shard released the level, on the coordinator's clock. */
  started_ms: number
  /** The shard's level was cut short (a stop). */
  interrupted: boolean
}

/** What ended a level or the run before its time: a shard lost, or a disagreement. */
export interface Incomplete {
  /** The shard lost; null when the run was ended for another reason (said in `reason`). */
  shard: number | null
  /** When the coordinator saw it, on its clock (ms since the epoch). */
  at_ms: number
  reason: string
}

export type Event =
  | { type: 'start'; level: number; value: number; at_ms: number }
  | { type: 'end'; level: number; complete: boolean }
  | { type: 'abort'; level: number | null; incomplete: Incomplete }

/** One exchange of /time, all in ms: t0 and t3 on the shard's clock, t1 and t2 on the coordinator's. */
export interface ClockSample {
  t0: number
  t1: number
  t2: number
  t3: number
}

export interface ClockOffset {
  /** coordinator − shard, ms. */
  offset_ms: number
  /** Half the round trip of the exchange used: the true offset is within offset ± bound. */
  bound_ms: number
  rtt_ms: number
}

/**
 * NTP's estimate from the exchange with the shortest round trip (the one least delayed by queues):
 * offset = ((t1 − t0) + (t2 − t3)) / 2, round trip = (t3 − t0) − (t2 − t1). Whatever the split of
 * the round trip between the two directions, the true offset lies within ± half of it.
 */
export function bestOffset(samples: readonly ClockSample[]): ClockOffset {
  let best: ClockOffset | null = null
  for (const { t0, t1, t2, t3 } of samples) {
    const rtt = Math.max(0, t3 - t0 - (t2 - t1))
    if (best !== null && rtt >= best.rtt_ms) continue
    best = { offset_ms: (t1 - t0 + (t2 - t3)) / 2, bound_ms: rtt / 2, rtt_ms: rtt }
  }
  if (best === null) throw new Error('bestOffset: no samples')
  // The bound is rounded up, never below what the exchange showed.
  return {
    offset_ms: Math.round(best.offset_ms * 1000) / 1000,
    bound_ms: Math.ceil(best.bound_ms * 1000) / 1000,
    rtt_ms: Math.ceil(best.rtt_ms * 1000) / 1000,
  }
}
