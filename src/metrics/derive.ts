import type { RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'

/** Per-request figures, all in milliseconds. Null when the request has no such figure. */

/** Time to first token: send to arrival of the first token-bearing event. */
export function ttftMs(record: RequestRecord): number | null {
  return record.first_token_at === null ? null : record.first_token_at - record.sent_at
}

/** End-to-end latency: send to the end of the response. */
export function e2eMs(record: RequestRecord): number {
  return record.end_at - record.sent_at
}

/**
 * Time per output token, first token excluded: (e2e - ttft) / (output_tokens - 1).
 * Undefined for fewer than two tokens or a response without a first token. Reasoning the server
 * counted but never streamed was generated before the first event, so it is not among the tokens
 * after it.
 */
export function tpotMs(record: RequestRecord): number | null {
  const tokens = record.output_tokens - unstreamedReasoningTokens(record)
  if (record.first_token_at === null || tokens < 2) return null
  return (record.end_at - record.first_token_at) / (tokens - 1)
}

/** Every gap between consecutive token-bearing events (one event may hold several tokens). */
export function pushItlMs(record: RequestRecord, into: { push(value: number): unknown }): void {
  const times = record.token_times
  for (let i = 1; i < times.length; i++) into.push((times[i] as number) - (times[i - 1] as number))
}

/** A success: the whole reply arrived. A request the client cancelled on purpose is neither this nor a failure. */
export function isOk(record: RequestRecord): boolean {
  return record.error === null && record.cancelled === undefined
}

/** The client aborted it on purpose (--cancel-share): counted apart from successes and failures. */
export function isCancelled(record: RequestRecord): boolean {
  return record.cancelled !== undefined
}
