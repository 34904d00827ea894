import type { RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'
import { Samples } from './accumulator.js'
import { isOk } from './derive.js'

/**
 * Where a level's successful requests delivered their tokens: each one's send, end and output
 * tokens, and the arrival of each of its token events, all in typed arrays (8 bytes an event, the
 * records not kept). ITL, ITL per token and the steady window's tokens are read from it once the
 * level ends: one copy of the event times serves the three.
 */
export class TokenTimeline {
  private readonly sent = new Samples()
  private readonly end = new Samples()
  private readonly tokens = new Samples()
  /** Per request: tokens per event (events / tokens the events carried), or 0 when its events carry none. */
  private readonly scale = new Samples()
  /** Index of the request's first event in `times`, and its count of events. */
  private readonly from = new Samples()
  private readonly count = new Samples()
  private readonly times = new Samples()
  /** Gaps between consecutive events of a request: events minus requests that had any. */
  private gapCount = 0

  add(record: RequestRecord): void {
    if (!isOk(record)) return
    const events = record.token_times.length
    this.sent.push(record.sent_at)
    this.end.push(record.end_at)
    this.tokens.push(record.output_tokens)
    this.scale.push(eventScale(record))
    this.from.push(this.times.length)
    this.count.push(events)
    this.times.pushAll(record.token_times)
    if (events > 1) this.gapCount += events - 1
  }

  /** Every gap between consecutive token events of a request, pooled (ITL), unsorted. */
  gaps(): Float64Array {
    return this.gapsScaled(false)
  }

  private sortedCache: Float64Array | null = null

  /**
   * The gaps sorted ascending, sorted once: the ITL distribution and its intervals both read them
   * (a level's largest sample; a second sort of it was most of what its intervals cost). Read once
   * the level has ended: the cache does not see records added after.
   */
  sortedGaps(): Float64Array {
    this.sortedCache ??= this.gaps().sort()
    return this.sortedCache
  }

  /** The same, each divided by its request's tokens per event (ITL per token), over requests whose events carry tokens. */
  perTokenGaps(): Float64Array {
    return this.gapsScaled(true)
  }

  private gapsScaled(perToken: boolean): Float64Array {
    // Read in place: a copy of every event time would double the level's largest sample at its end.
    const times = this.times
    const out = new Float64Array(this.gapCount)
    let filled = 0
    for (let i = 0; i < this.sent.length; i++) {
      const scale = perToken ? this.scale.at(i) : 1
      if (scale === 0) continue
      const from = this.from.at(i)
      const last = from + this.count.at(i)
      for (let k = from + 1; k < last; k++) out[filled++] = (times.at(k) - times.at(k - 1)) * scale
    }
    return filled === out.length ? out : out.subarray(0, filled)
  }

  /**
   * Output tokens that arrived in (start, end]: each request's events there, each carrying an equal
   * share of its tokens; a response without token events (not streamed) delivers them all at its end.
   */
  within(start: number, end: number): number {
    let tokens = 0
    const times = this.times
    for (let i = 0; i < this.sent.length; i++) {
      const requestEnd = this.end.at(i)
      if (requestEnd <= start || this.sent.at(i) >= end) continue
      const output = this.tokens.at(i)
      const count = this.count.at(i)
      if (count === 0) {
        tokens += requestEnd > start && requestEnd <= end ? output : 0
        continue
      }
      const from = this.from.at(i)
      let events = 0
      for (let k = from; k < from + count; k++) {
        const t = times.at(k)
        if (t > start && t <= end) events++
      }
      tokens += (output * events) / count
    }
    return tokens
  }
}

/** Output tokens that came in events: hidden reasoning is in output_tokens but came in none. */
export function streamedTokens(record: RequestRecord): number {
  return record.output_tokens - unstreamedReasoningTokens(record)
}

/** A successful request with token events whose tokens can be spread over them. */
export function countsEvents(record: RequestRecord): boolean {
  return record.error === null && record.chunks > 0 && streamedTokens(record) > 0
}

/** Events per token the request's events carried (an ITL gap times this is per token); 0 when it does not count events. */
function eventScale(record: RequestRecord): number {
  return countsEvents(record) ? record.chunks / streamedTokens(record) : 0
}
