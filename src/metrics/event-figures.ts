import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate } from './accumulator.js'
import { type Distribution, round, summarizeSorted } from './distribution.js'
import { countsEvents, streamedTokens, TokenTimeline } from './token-timeline.js'

/**
 * What a level's streamed events carried. An SSE event is not a token: speculative decoding and
 * batching proxies send several tokens per event, and per-event ITL is then not per-token.
 */
export interface EventFigures {
  /** Output tokens per token-bearing event, over successful streamed requests; null without events. */
  tokens_per_event: number | null
  /** Each gap between events divided by its request's tokens per event. */
  itl_per_token_ms: Distribution
  /** Requests that got events after `[DONE]` (ignored), and how many such events in all. */
  requests_with_events_after_done: number
  events_after_done: number
}

/** Above this many tokens per event on average, the level gets a note. */
export const MULTI_TOKEN_EVENTS = 1.2

/**
 * `itlMs`: the level's ITL distribution, when computed. When every event carried one token and the
 * per-token sample has as many gaps, it is the same sample: reused rather than sorted again (a
 * level's ITL sample is one value per event, the largest sort of a summary).
 */
export function eventFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
  itlMs?: Distribution,
): EventFigures {
  const timeline = new TokenTimeline()
  for (const record of records) timeline.add(record)
  return accumulate(
    records,
    eventAccumulator(percentiles, () => itlMs, timeline),
  )
}

/**
 * The same, fed record by record; `itlMs` is read when the result is, and the per-token gaps from
 * the level's `timeline` (fed the same records) unless they are the ITL sample itself.
 */
export function eventAccumulator(
  percentiles: readonly number[],
  itlMs: () => Distribution | undefined,
  timeline: TokenTimeline,
): Accumulator<EventFigures> {
  let tokens = 0
  let events = 0
  let afterDoneRequests = 0
  let afterDone = 0
  let gaps = 0
  let oneTokenEach = true
  return {
    add(record) {
      if (record.events_after_done !== undefined) {
        afterDoneRequests++
        afterDone += record.events_after_done
      }
      if (!countsEvents(record)) return
      // Tokens the events carried: hidden reasoning is in output_tokens but came in no event.
      const streamed = streamedTokens(record)
      if (record.chunks !== streamed) oneTokenEach = false
      tokens += streamed
      events += record.chunks
      gaps += Math.max(0, record.token_times.length - 1)
    },
    result() {
      const itl = itlMs()
      const sameAsItl = itl !== undefined && oneTokenEach && itl.count === gaps
      return {
        tokens_per_event: events === 0 ? null : round(tokens / events, 3),
        itl_per_token_ms: sameAsItl
          ? { ...itl }
          : summarizeSorted(timeline.perTokenGaps().sort(), percentiles),
        requests_with_events_after_done: afterDoneRequests,
        events_after_done: afterDone,
      }
    },
  }
}

/** Notes a reader needs: multi-token events, events after [DONE], usage that was not believed. */
export function eventNotes(figures: EventFigures, usageRejected: number): string[] {
  const notes: string[] = []
  const perEvent = figures.tokens_per_event
  if (perEvent !== null && perEvent > MULTI_TOKEN_EVENTS)
    notes.push(
      `events carry ${perEvent.toFixed(2)} tokens on average (speculative decoding or a batching proxy): ITL is per event, not per token; see ITL per token`,
    )
  if (figures.requests_with_events_after_done > 0)
    notes.push(
      `${figures.requests_with_events_after_done} request(s) got ${figures.events_after_done} event(s) after [DONE]: ignored (not tokens, not time)`,
    )
  if (usageRejected > 0)
    notes.push(
      `${usageRejected} request(s) reported impossible usage (negative, fractional, or far from max_tokens or the text): their output tokens are the tokenizer's count`,
    )
  return notes
}
