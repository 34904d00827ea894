import type { RequestRecord } from '../src/records/types.js'

/**
 * A measured record of a streamed request as the client writes it, for the benches that feed a
 * summarizer synthetic levels: `times` its token events (none when it failed with a 503).
 */
export function streamedRecord(
  seq: number,
  level: number,
  sent: number,
  times: number[],
  failed: boolean,
  requestedTokens: number,
): RequestRecord {
  return {
    seq,
    worker: 0,
    level,
    phase: 'measure',
    prompt_id: seq,
    scheduled_at: sent,
    sent_at: sent,
    headers_at: sent + 5,
    first_token_at: times[0] ?? null,
    end_at: times.at(-1) ?? sent + 20,
    token_times: times,
    status: failed ? 503 : 200,
    error: failed ? { class: 'http_5xx', message: 'HTTP 503: overloaded' } : null,
    input_tokens: 256,
    output_tokens: times.length,
    requested_input_tokens: 256,
    requested_output_tokens: requestedTokens,
    token_source: 'usage',
    tokenizer_output_tokens: times.length,
    chunks: times.length,
    finish_reason: failed ? null : 'length',
    attempt: 1,
    connection: 'reused',
  } as RequestRecord
}
