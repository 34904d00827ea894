import { seededRandom } from '../random.js'

/**
 * Staggered starts of a closed loop's streams. Streams released together send identical requests in
 * step: a batching engine prefills their prompts in one step (each waits for all of them), they finish
 * together and send again together, a convoy that stays in step and understates what the server does
 * at that concurrency. Real users are not in step, so each stream's first send is offset over about
 * one request's duration; after its first request a stream runs closed-loop as before.
 */

/** The spread when the run has no timing of its own (no preflight): a few decode-bound seconds' worth. */
export const DEFAULT_STAGGER_MS = 1000
/** At most this: a long request must not hold a level's last stream back for minutes. */
export const MAX_STAGGER_MS = 30_000
/** A timed level spends at most this share of its window starting its streams. */
const MAX_SHARE_OF_TIMED_LEVEL = 0.1
/**
 * The share of one request's expected duration the first sends are spread over. The probes' projection
 * is rough (a CI run's was 677 ms for requests that took 580 at c=4): a spread longer than the real
 * cycle puts the last stream's first send on the first stream's second, they share a prefill step and
 * stay in step from then on, the very convoy the stagger is there to prevent. Three quarters of it
 * keeps every stream's phase apart unless the projection is a third too long.
 */
const SHARE_OF_REQUEST = 0.75
/** How far into its own slice of the spread a stream may start: the rest keeps neighbours apart. */
const JITTER = 0.5

/**
 * The spread of a level's first sends, ms: three quarters of one request's expected duration (the
 * warm probes' projection), else DEFAULT_STAGGER_MS; at most MAX_STAGGER_MS and a tenth of a timed level (a short level must still hold its streams for most of its window).
 */
export function staggerSpreadMs(expectedRequestMs: number | null, timedLevelS: number | null): number {
  const expected =
    expectedRequestMs !== null && Number.isFinite(expectedRequestMs) && expectedRequestMs > 0
      ? expectedRequestMs * SHARE_OF_REQUEST
      : DEFAULT_STAGGER_MS
  const timedCap =
    timedLevelS === null ? Number.POSITIVE_INFINITY : timedLevelS * 1000 * MAX_SHARE_OF_TIMED_LEVEL
  return Math.round(Math.min(expected, MAX_STAGGER_MS, timedCap))
}

/**
 * Stream i's first send, ms after the round's start: in its own slice i of `spreadMs / streams`, at a
 * seeded place in the slice's first half, so no two streams start closer than half a slice. One
 * stream starts at once.
 */
export function staggeredStarts(streams: number, spreadMs: number, seed: number): Float64Array {
  if (streams <= 1 || spreadMs <= 0) return new Float64Array(streams)
  const random = seededRandom(seed)
  const slice = spreadMs / streams
  return Float64Array.from({ length: streams }, (_, i) => (i + JITTER * random()) * slice)
}
