import type { RequestRecord } from '../records/types.js'

/**
 * requests.jsonl flattened: one column per field of a record, nested objects spread into prefixed
 * columns, token_times summed up (count, first, last) rather than expanded. requests.csv and
 * requests.parquet both write these columns, in this order, so the two files read the same.
 * Times are milliseconds on the run clock, as in requests.jsonl; a field a record lacks is null.
 */

/**
 * int: counts (Parquet INT64; a column where some value is not a whole number, which only a server's
 * odd report could cause, is written as DOUBLE instead so nothing is lost); double: times and rates.
 */
export type ColumnType = 'int' | 'double' | 'string'

export interface RequestColumn {
  name: string
  type: ColumnType
  value: (record: RequestRecord) => string | number | null
}

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value)

export const REQUEST_COLUMNS: readonly RequestColumn[] = [
  { name: 'run', type: 'string', value: (r) => orNull(r.run) },
  { name: 'shard', type: 'int', value: (r) => orNull(r.shard) },
  { name: 'repeat', type: 'int', value: (r) => orNull(r.repeat) },
  { name: 'seq', type: 'int', value: (r) => r.seq },
  { name: 'worker', type: 'int', value: (r) => r.worker },
  // A request rate can be fractional (0.5/s): a double, not an int.
  { name: 'level', type: 'double', value: (r) => r.level },
  { name: 'phase', type: 'string', value: (r) => r.phase },
  { name: 'attempt', type: 'int', value: (r) => r.attempt },
  { name: 'prompt_id', type: 'int', value: (r) => r.prompt_id },
  { name: 'session', type: 'string', value: (r) => orNull(r.session) },
  { name: 'turn', type: 'int', value: (r) => orNull(r.turn) },
  { name: 'scheduled_at_ms', type: 'double', value: (r) => r.scheduled_at },
  { name: 'sent_at_ms', type: 'double', value: (r) => r.sent_at },
  { name: 'headers_at_ms', type: 'double', value: (r) => r.headers_at },
  { name: 'first_token_at_ms', type: 'double', value: (r) => r.first_token_at },
  { name: 'end_at_ms', type: 'double', value: (r) => r.end_at },
  { name: 'token_times_count', type: 'int', value: (r) => r.token_times.length },
  { name: 'token_time_first_ms', type: 'double', value: (r) => orNull(r.token_times[0]) },
  { name: 'token_time_last_ms', type: 'double', value: (r) => orNull(r.token_times.at(-1)) },
  { name: 'status', type: 'int', value: (r) => r.status },
  { name: 'error_class', type: 'string', value: (r) => r.error?.class ?? null },
  { name: 'error_timeout', type: 'string', value: (r) => r.error?.timeout ?? null },
  { name: 'error_message', type: 'string', value: (r) => r.error?.message ?? null },
  { name: 'input_tokens', type: 'int', value: (r) => r.input_tokens },
  { name: 'output_tokens', type: 'int', value: (r) => r.output_tokens },
  { name: 'requested_input_tokens', type: 'int', value: (r) => orNull(r.requested_input_tokens) },
  { name: 'requested_output_tokens', type: 'int', value: (r) => orNull(r.requested_output_tokens) },
  { name: 'token_source', type: 'string', value: (r) => r.token_source },
  { name: 'tokenizer_output_tokens', type: 'int', value: (r) => r.tokenizer_output_tokens },
  { name: 'chunks', type: 'int', value: (r) => r.chunks },
  { name: 'finish_reason', type: 'string', value: (r) => r.finish_reason },
  { name: 'cached_tokens', type: 'int', value: (r) => orNull(r.cached_tokens) },
  { name: 'reasoning_tokens', type: 'int', value: (r) => orNull(r.reasoning_tokens) },
  { name: 'first_reasoning_at_ms', type: 'double', value: (r) => orNull(r.first_reasoning_at) },
  { name: 'first_answer_at_ms', type: 'double', value: (r) => orNull(r.first_answer_at) },
  { name: 'reasoning_events', type: 'int', value: (r) => orNull(r.reasoning_events) },
  { name: 'reasoning_output_tokens', type: 'int', value: (r) => orNull(r.reasoning_output_tokens) },
  { name: 'reasoning_token_source', type: 'string', value: (r) => orNull(r.reasoning_token_source) },
  { name: 'connection', type: 'string', value: (r) => orNull(r.connection) },
  { name: 'resent_reason', type: 'string', value: (r) => r.resent?.reason ?? null },
  { name: 'events_after_done', type: 'int', value: (r) => orNull(r.events_after_done) },
  {
    name: 'rejected_usage_completion_tokens',
    type: 'int',
    value: (r) => r.rejected_usage?.completion_tokens ?? null,
  },
  { name: 'rejected_usage_reason', type: 'string', value: (r) => r.rejected_usage?.reason ?? null },
  { name: 'server_prompt_n', type: 'int', value: (r) => r.server_timings?.prompt_n ?? null },
  { name: 'server_prompt_ms', type: 'double', value: (r) => r.server_timings?.prompt_ms ?? null },
  { name: 'server_predicted_n', type: 'int', value: (r) => r.server_timings?.predicted_n ?? null },
  { name: 'server_predicted_ms', type: 'double', value: (r) => r.server_timings?.predicted_ms ?? null },
  { name: 'server_cache_n', type: 'int', value: (r) => r.server_timings?.cache_n ?? null },
]
