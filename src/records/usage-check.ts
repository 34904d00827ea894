import type { RequestRecord } from './types.js'
import { unstreamedReasoningTokens } from './unstreamed-reasoning.js'

/**
 * Whether a server's usage.completion_tokens can be believed. A server's count is the best there
 * is when it is sane; one that says -5, 2.5 or 1e15 tokens must not become -37.8 or 7.9e15 tok/s.
 * The checks are loose on purpose: tokenizers differ by tens of percent and an event may carry
 * several tokens, so only counts no honest server could send are refused.
 */

/** Usage above max_tokens × this (+ USAGE_SLACK_TOKENS) is refused. */
export const USAGE_MAX_TOKENS_FACTOR = 1.5
/** ... and usage above this many times the tokens the text or the events account for. */
export const USAGE_EVIDENCE_FACTOR = 20
export const USAGE_SLACK_TOKENS = 16

/** Why the record's usage count is not believable, or null when it is. `counted`: tokenizer's count. */
export function implausibleUsage(record: RequestRecord, usage: number, counted: number): string | null {
  if (!Number.isInteger(usage)) return `not a whole number (${usage})`
  if (usage < 0) return `negative (${usage})`
  const max = record.requested_output_tokens
  if (max !== undefined && usage > max * USAGE_MAX_TOKENS_FACTOR + USAGE_SLACK_TOKENS)
    return `${usage} tokens, far above the max_tokens of ${max} sent`
  // Thinking the server counted and did not stream is evidence no event or text can show.
  const evidence = Math.max(counted, record.chunks) + Math.min(unstreamedReasoningTokens(record), usage)
  if (usage > evidence * USAGE_EVIDENCE_FACTOR + USAGE_SLACK_TOKENS)
    return `${usage} tokens, far from the ${record.chunks} token events and ${counted} tokens of text received`
  // Below: an event carries at least about one token, and text is no tokenizer's quarter.
  if (usage * 2 + USAGE_SLACK_TOKENS < record.chunks || usage * 4 + USAGE_SLACK_TOKENS < counted)
    return `${usage} tokens, far below the ${record.chunks} token events and ${counted} tokens of text received`
  return null
}
