import { dealtArrivals } from './arrivals.js'
import type { CancelPlan } from './cancel-pick.js'
import { splitEvenly, splitProportionally } from './split.js'

/**
 * A level, or a part of one: the same type at every scale. The whole level (built from the config),
 * a shard's share of it and a thread's share of that are each made by `shareOf`, as k6's execution
 * segments divide a test over instances and VUs alike, so the two divisions cannot drift apart.
 */
export interface LevelShare {
  /** The level's value: streams (concurrency mode) or requests per second (rate mode), the whole level's in every share. */
  level: number
  /** Warm-up requests: a closed loop before the measured round, excluded from the figures. */
  warmup: number
  /**
   * The prompts the warm-up round sends, cycled: [first, first + count). Absent = the thread's next
   * prompts, like the measured round's. A trace replay's warm-up has its own (see trace-plan.ts),
   * so that no measured row finds its prompt cached by the warm-up.
   */
  warmupPrompts?: { first: number; count: number }
  /**
   * The prompts both rounds cycle through: [first, first + count) (the warm-up's own, when it has
   * them, win). Absent = any of the plan's. The levels keep to the plan's range and the drift
   * control to a range of its own, so the control meets no prompt a level left in the server's
   * prefix cache: it sees the cache state the level it repeats saw (issue 36).
   */
  prompts?: { first: number; count: number }
  /** Retries of a failed request (off by default); every attempt is its own record. */
  retry: number
  /** Requests the client aborts mid-stream (./cancel-pick.ts); absent = none. */
  cancel?: CancelPlan
  /**
   * Several targets: the one target the whole share goes to (a --paired block, run/plan/paired-blocks.ts);
   * 'each' = every target gets the whole share at once (--paired-mode together); absent = every
   * target, by weight (./target-share.ts).
   */
  target?: number | 'each'
  /** Timed levels: seconds before and after the measured window whose requests are excluded. */
  window: TimedWindow | null
  load: ClosedShare | OpenShare
}

export interface TimedWindow {
  warmup_s: number
  duration_s: number
  cooldown_s: number
}

/** Exactly `concurrency` requests in flight. */
export interface ClosedShare {
  kind: 'closed'
  concurrency: number
  /** Stop issuing after this many requests (first attempts); null = at the end of the timed level. */
  requests: number | null
  /**
   * Each stream's first send of the measured round, ms after its start (./stagger.ts), one per
   * stream; absent = every stream starts at once.
   */
  startOffsets?: Float64Array
}

/** Requests sent at intended times, whatever the server's pace. */
export interface OpenShare {
  kind: 'open'
  /** Intended send times, ms after the measured round's start, ascending. */
  offsets: Float64Array
  /**
   * At most this many requests in flight; an arrival finding them all busy waits for one (and its
   * latency from the intended time includes the wait). A bound keeps a dead server from opening
   * thousands of sockets.
   */
  maxInFlight: number
  /**
   * The whole-request timeout, ms: an arrival still waiting this long after its intended time is
   * dropped, not sent (its latency from the intended time would already be past it).
   */
  timeoutMs: number
  /**
   * The prompt each arrival sends, dealt with the offsets (trace replay: row i sends body i at row
   * i's time); absent = the next prompt of the thread's own sequence.
   */
  promptIds?: Float64Array
}

/** Open-loop warm-up requests run this many at a time. */
const OPEN_WARMUP_CONCURRENCY = 4

/**
 * Part `index` of `count` of `share`. Remainders go to the first parts, so the empty parts, if any,
 * are the last ones:
 * - closed: the streams split evenly, the requests in proportion to them (the parts add up exactly);
 * - open: the schedule dealt round-robin (the parts superpose to exactly it), and the in-flight bound
 *   split evenly, at least one each so that every part can send;
 * - warm-up requests in proportion to each part's connections, so a part with no stream gets none.
 */
export function shareOf(share: LevelShare, index: number, count: number): LevelShare {
  const { load } = share
  const connections =
    load.kind === 'closed'
      ? splitEvenly(load.concurrency, count)
      : splitEvenly(load.maxInFlight, count).map((bound) => Math.max(1, bound))
  const part = (total: number): number => splitProportionally(total, connections)[index] as number
  return {
    level: share.level,
    warmup: part(share.warmup),
    ...(share.warmupPrompts === undefined ? {} : { warmupPrompts: share.warmupPrompts }),
    ...(share.prompts === undefined ? {} : { prompts: share.prompts }),
    retry: share.retry,
    ...(share.cancel === undefined ? {} : { cancel: share.cancel }),
    window: share.window,
    load:
      load.kind === 'closed'
        ? {
            kind: 'closed',
            concurrency: connections[index] as number,
            requests: load.requests === null ? null : part(load.requests),
            // Dealt round-robin, as the streams are split: part `index` gets streams index, index + count, ...
            ...(load.startOffsets === undefined
              ? {}
              : { startOffsets: dealtArrivals(load.startOffsets, index, count) }),
          }
        : {
            kind: 'open',
            offsets: dealtArrivals(load.offsets, index, count),
            maxInFlight: connections[index] as number,
            timeoutMs: load.timeoutMs,
            ...(load.promptIds === undefined
              ? {}
              : { promptIds: dealtArrivals(load.promptIds, index, count) }),
          },
  }
}

/** The most requests a share has in flight, which sizes its connection pool. */
export function connectionsOf(share: LevelShare): number {
  return share.load.kind === 'closed' ? share.load.concurrency : share.load.maxInFlight
}

/** How many of a share's warm-up requests run at once: its streams, or a few for an open loop. */
export function warmupConcurrency(share: LevelShare): number {
  return Math.min(
    share.load.kind === 'closed' ? share.load.concurrency : OPEN_WARMUP_CONCURRENCY,
    share.warmup,
  )
}
