import type { RequestRecord } from '../records/types.js'
import { boundedCount } from './bounded-count.js'

/**
 * Completes a record's reasoning token count on the main thread (after its output count) and drops
 * its transient reasoning text. The sources, best first:
 *  - usage: the server's usage.completion_tokens_details.reasoning_tokens (OpenAI, some gateways);
 *  - events: the reasoning events themselves, when the stream carried exactly one token per event
 *    (the server's usage.completion_tokens equals the token-bearing events), so each one is a token;
 *  - tokenizer: the offline tokenizer on the reasoning text, as output_tokens is counted without usage.
 * A count is never above output_tokens (the answer's tokens are output_tokens minus it). A request
 * with no reasoning (no reasoning event, usage silent or 0) gets no reasoning fields at all.
 */
export function completeReasoningCounts(
  record: RequestRecord,
  count: (text: string) => number,
): RequestRecord {
  const text = record.reasoning_text ?? ''
  delete record.reasoning_text
  const fromUsage = record.reasoning_tokens ?? null
  const events = record.reasoning_events ?? 0
  if (fromUsage !== null && fromUsage > 0) {
    record.reasoning_output_tokens = Math.min(fromUsage, record.output_tokens)
    record.reasoning_token_source = 'usage'
    return record
  }
  if (events === 0 && text === '') return record
  const onePerEvent = record.token_source === 'usage' && record.output_tokens === record.chunks
  if (onePerEvent && events > 0) {
    record.reasoning_output_tokens = Math.min(events, record.output_tokens)
    record.reasoning_token_source = 'events'
    return record
  }
  record.reasoning_output_tokens = Math.min(boundedCount(text, count).tokens, record.output_tokens)
  record.reasoning_token_source = 'tokenizer'
  return record
}
