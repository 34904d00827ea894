import type { RequestRecord } from '../records/types.js'
import { implausibleUsage } from '../records/usage-check.js'
import { boundedCount } from './bounded-count.js'
import { completeReasoningCounts } from './reasoning-counts.js'
import { loadTokenizer } from './tokenizers.js'

/**
 * Completes a record's token counts on the main thread and drops its transient text: output_tokens
 * from the tokenizer when the server sent no usage, and the tokenizer's own count beside the
 * server's when it did (so a report can show how far apart they are). A chunk is not a token.
 * Then the reasoning part of the output (reasoning-counts.ts).
 */
export function completeTokenCounts(
  record: RequestRecord,
  count: (text: string) => number = (text) => loadTokenizer('o200k').count(text),
): RequestRecord {
  return completeReasoningCounts(completeOutputCount(record, count), count)
}

function completeOutputCount(record: RequestRecord, count: (text: string) => number): RequestRecord {
  const text = record.output_text ?? ''
  delete record.output_text
  delete record.tool_call_content
  const { tokens: counted, sampledChars } = boundedCount(text, count)
  if (sampledChars !== null) record.tokenizer_sampled_chars = sampledChars
  if (record.token_source === 'usage') {
    record.tokenizer_output_tokens = counted
    // Checked before trusted: an impossible count falls back to the tokenizer, both kept.
    const reason = implausibleUsage(record, record.output_tokens, counted)
    if (reason === null) return record
    record.rejected_usage = { completion_tokens: record.output_tokens, reason }
    record.token_source = 'tokenizer'
  }
  record.output_tokens = counted
  return record
}
