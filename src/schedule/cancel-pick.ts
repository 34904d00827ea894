/**
 * Which requests the client cancels, and when. A request is picked by a low-discrepancy (Weyl)
 * sequence of its thread and sequence number rather than a random draw, so any run of consecutive
 * requests of a thread holds the share to within one request: a short level still cancels its
 * share, and the same plan picks the same requests on every run.
 */
export interface CancelPlan {
  /** 0..1: the share of requests aborted. */
  share: number
  /** The abort comes once this many token-bearing events have arrived (1 = at the first token). */
  after_events: number
}

/** The golden ratio's fractional part: the Weyl sequence's step, the most evenly spread there is. */
const STEP = 0.6180339887498949
/** Each thread's sequence starts elsewhere, so threads do not cancel their requests in step. */
const THREAD_OFFSET = 0.41421356237309515

/** The events after which request `seq` of thread `worker` is aborted; null = it runs to its end. */
export function cancelAfterEvents(plan: CancelPlan | undefined, worker: number, seq: number): number | null {
  if (plan === undefined) return null
  const position = (seq * STEP + worker * THREAD_OFFSET) % 1
  return position < plan.share ? plan.after_events : null
}
