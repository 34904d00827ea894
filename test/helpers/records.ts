import type { RequestRecord } from '../../src/records/types.js'

/** A hand-made record: a request sent at `sent_at` whose tokens arrived at `token_times`. */
export function makeRecord(overrides: Partial<RequestRecord> & { token_times?: number[] }): RequestRecord {
  const tokenTimes = overrides.token_times ?? []
  const sentAt = overrides.sent_at ?? 0
  return {
    seq: 0,
    worker: 0,
    level: 1,
    phase: 'measure',
    prompt_id: 0,
    scheduled_at: sentAt,
    sent_at: sentAt,
    headers_at: sentAt,
    first_token_at: tokenTimes[0] ?? null,
    end_at: tokenTimes.at(-1) ?? sentAt,
    status: 200,
    error: null,
    input_tokens: 10,
    output_tokens: tokenTimes.length,
    token_source: 'usage',
    tokenizer_output_tokens: tokenTimes.length,
    chunks: tokenTimes.length,
    finish_reason: 'length',
    attempt: 1,
    ...overrides,
    token_times: tokenTimes,
  }
}
