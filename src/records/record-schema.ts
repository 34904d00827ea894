import type { z } from '../zod.js'
import { aCount, aList, aNumber, anInteger, anObject, aString, oneOf } from './stored-values.js'
import { ERROR_CLASSES } from './types.js'

/**
 * requests.jsonl's line as it is read back (RequestRecord): the fields every llmbench has written
 * are required, those added later optional, and every one of them typed, so a tampered line is
 * named instead of read as something else. Built on first use: a run that never reads a folder
 * back does not pay for it.
 */
let schema: z.ZodType | undefined

export function recordSchema(): z.ZodType {
  schema ??= build()
  return schema
}

function build(): z.ZodType {
  const time = () => aNumber('a time in ms')
  const timeOrNull = () => aNumber('a time in ms or null').nullable()
  const countOrNull = () => aCount('a non-negative integer or null').nullable()
  return anObject(
    {
      seq: anInteger(),
      worker: aCount(),
      level: aNumber('a level value (a number)'),
      phase: oneOf(['warmup', 'measure', 'cooldown', 'preflight', 'calibration', 'control', 'recheck']),
      prompt_id: anInteger(),
      scheduled_at: time(),
      sent_at: time(),
      connection_wait_ms: aNumber().optional(),
      headers_at: timeOrNull(),
      first_token_at: timeOrNull(),
      end_at: time(),
      token_times: aList(time(), 'a list of times in ms'),
      status: anInteger().nullable(),
      error: anObject(
        {
          class: oneOf(ERROR_CLASSES),
          timeout: oneOf(['connect', 'first_token', 'idle', 'total']).optional(),
          message: aString(),
        },
        'an error object or null',
      ).nullable(),
      input_tokens: countOrNull(),
      output_tokens: aCount(),
      requested_input_tokens: aCount().optional(),
      requested_output_tokens: aCount().optional(),
      token_source: oneOf(['usage', 'tokenizer']),
      tokenizer_output_tokens: countOrNull(),
      tokenizer_sampled_chars: aCount().optional(),
      chunks: aCount(),
      finish_reason: aString().nullable(),
      server_timings: anObject(
        {
          prompt_n: countOrNull(),
          prompt_ms: aNumber('a number or null').nullable(),
          predicted_n: countOrNull(),
          predicted_ms: aNumber('a number or null').nullable(),
          cache_n: countOrNull(),
        },
        'an object or null',
      )
        .nullable()
        .optional(),
      server_speculation: anObject(
        {
          draft_tokens: countOrNull(),
          accepted_tokens: countOrNull(),
          steps: countOrNull(),
          accept_length: aNumber('a number or null').nullable(),
          accept_rate: aNumber('a number or null').nullable(),
        },
        'an object',
      ).optional(),
      cached_tokens: countOrNull().optional(),
      reasoning_tokens: countOrNull().optional(),
      first_reasoning_at: timeOrNull().optional(),
      first_answer_at: timeOrNull().optional(),
      reasoning_events: aCount().optional(),
      reasoning_output_tokens: aCount().optional(),
      reasoning_token_source: oneOf(['usage', 'events', 'tokenizer']).optional(),
      session: aString().optional(),
      turn: aCount().optional(),
      job: aString().optional(),
      job_depth: aCount().optional(),
      job_parents: aList(aCount(), 'a list of turn indexes').optional(),
      job_turns: aCount().optional(),
      tool_wait_ms: aNumber().optional(),
      shard: aCount().optional(),
      target: anObject(
        { endpoint: aCount(), model: aCount() },
        'an object of endpoint and model indexes',
      ).optional(),
      repeat: aCount().optional(),
      pair: aCount().optional(),
      run: aString().optional(),
      attempt: aCount(),
      connection: oneOf(['new', 'reused']).optional(),
      connect_ms: aNumber().optional(),
      resent: anObject({ reason: aString() }).optional(),
      cancelled: anObject({ after_events: aCount() }, 'an object of after_events').optional(),
      events_after_done: aCount().optional(),
      rejected_usage: anObject({ completion_tokens: aNumber(), reason: aString() }).optional(),
      schema_check: oneOf(['valid', 'invalid', 'truncated']).optional(),
      tool_calls: aCount().optional(),
      tool_call_source: oneOf(['deltas', 'text']).optional(),
      first_tool_call_at: aNumber().nullable().optional(),
      tool_check: oneOf(['none', 'valid', 'invalid', 'truncated']).optional(),
    },
    'a JSON object (one request)',
  )
}
