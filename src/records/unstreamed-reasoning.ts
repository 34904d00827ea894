import type { RequestRecord } from './types.js'

/**
 * Reasoning tokens the server counted in usage but never streamed: a model that thinks without
 * sending its thoughts (OpenAI's o-series) reports them in usage.completion_tokens_details, and
 * usage.completion_tokens includes them, yet no event carried them. Whatever compares usage with
 * what arrived (the usage check, tokens per event, the tokenizer's count) leaves these out; 0 when
 * reasoning came as events, usage said nothing of it, or the record is of a version that did not
 * count reasoning events (no first_answer_at): its figures stay as they were.
 */
export function unstreamedReasoningTokens(record: RequestRecord): number {
  if (record.first_answer_at === undefined || (record.reasoning_events ?? 0) > 0) return 0
  return Math.max(record.reasoning_tokens ?? 0, 0)
}
