/** Error classes, as docs/results.md "requests.jsonl" names them: every failed request lands in exactly one. */
export const ERROR_CLASSES = [
  'timeout',
  'http_4xx',
  'http_429',
  'http_5xx',
  'connection',
  'stream',
  'other',
] as const
export type ErrorClass = (typeof ERROR_CLASSES)[number]

export interface RequestError {
  class: ErrorClass
  /** For class "timeout": which timeout fired. */
  timeout?: 'connect' | 'first_token' | 'idle' | 'total'
  /** Redacted (no API key) and truncated server or client message. */
  message: string
}

/** The (endpoint, model) pair a request was sent to: indexes in the order the run was given them. */
export interface RequestTarget {
  endpoint: number
  model: number
}

export type TokenSource = 'usage' | 'tokenizer'

/**
 * Where a request's reasoning token count came from: the server's
 * usage.completion_tokens_details.reasoning_tokens, the reasoning events themselves (the stream
 * carried one token per event, as usage confirmed), or the offline tokenizer on the reasoning text.
 */
export type ReasoningTokenSource = 'usage' | 'events' | 'tokenizer'

/**
 * llama.cpp's `timings` object from the last chunk of a response, as the server measured it: prompt
 * tokens computed (cached ones excluded) and the time they took (the prefill), tokens generated and
 * the time they took (the decode), and the prompt tokens taken from the slot's cache (`cache_n`,
 * newer builds only). A field the server did not send is null.
 */
export interface ServerTimings {
  prompt_n: number | null
  prompt_ms: number | null
  predicted_n: number | null
  predicted_ms: number | null
  cache_n: number | null
}

/**
 * What the engine said of its speculative decoding for one request, in the response itself: llama.cpp's
 * `timings.draft_n` / `draft_n_accepted` (newer builds), SGLang's `meta_info.spec_*`. A field the server
 * did not send is null.
 */
export interface ServerSpeculation {
  /** Draft tokens proposed: timings.draft_n, meta_info.spec_draft_token_num. */
  draft_tokens: number | null
  /** Draft tokens the target accepted: timings.draft_n_accepted, meta_info.spec_accept_token_num. */
  accepted_tokens: number | null
  /** Verification steps: meta_info.spec_verify_ct. */
  steps: number | null
  /** The engine's own mean tokens per step: meta_info.spec_accept_length. */
  accept_length: number | null
  /** The engine's own accepted / drafted: meta_info.spec_accept_rate. */
  accept_rate: number | null
}

/**
 * One request as it happened: the only input to every summary and report.
 * Times are milliseconds on the run clock (performance.now(), monotonic), stamped when bytes
 * arrive, before any parsing. Wire names are snake_case because this is what requests.jsonl holds.
 */
export interface RequestRecord {
  seq: number
  worker: number
  /** The level this request belongs to: its value, streams or requests per second (the run's load mode). */
  level: number
  /**
   * measure: counted. warmup: before the measured window (warm-up requests, or sent in the warm-up
   * seconds of a timed level). cooldown: sent after the measured window, to keep the load steady
   * while the window's last requests finish. preflight/calibration: probes before the run. control:
   * the first level measured again, briefly, after the last one (see analysis/drift.ts), kept out of
   * that level's figures.
   */
  phase: 'warmup' | 'measure' | 'cooldown' | 'preflight' | 'calibration' | 'control' | 'recheck'
  prompt_id: number
  /**
   * When the scheduler wanted it sent. Closed loop: the end of the stream's previous request.
   * Request-rate mode: the arrival's intended time, so latency can be measured from it
   * (coordinated omission) as well as from the actual send.
   */
  scheduled_at: number
  sent_at: number
  /**
   * From handing the request to the connection pool to writing it (sent_at): opening a new
   * connection (TCP, TLS; a full accept backlog makes it a SYN retry, ~1 s), or the turn before a
   * kept-alive one is reused. Part of sent_at - scheduled_at; absent in records of older versions
   * and when the request failed before it was written.
   */
  connection_wait_ms?: number
  headers_at: number | null
  /** Arrival of the first token-bearing event (content, reasoning, refusal or tool-call delta). */
  first_token_at: number | null
  end_at: number
  /** Arrival times of every token-bearing event, including the first; gives ITL without keeping text. */
  token_times: number[]
  status: number | null
  error: RequestError | null
  input_tokens: number | null
  output_tokens: number
  /**
   * What the plan asked for: the prompt's requested input length and the max_tokens sent. Set on the
   * main thread from the prompt plan; absent in records of older versions.
   */
  requested_input_tokens?: number
  requested_output_tokens?: number
  token_source: TokenSource
  /** Tokenizer count when the server also sent usage: lets the report show the discrepancy. */
  tokenizer_output_tokens: number | null
  /**
   * Set when the output text was too long to count whole (token-counts.ts): the characters counted,
   * from the start; the tokenizer's figure for the rest is that head's rate. Absent when all was counted.
   */
  tokenizer_sampled_chars?: number
  /** Token-bearing SSE events received: a chunk is not a token, this is kept to show the difference. */
  chunks: number
  finish_reason: string | null
  /** llama.cpp's in-band `timings` (see ServerTimings); null when the server sent none, absent in older records. */
  server_timings?: ServerTimings | null
  /** Speculative decoding as the engine reported it in the response (see ServerSpeculation); absent when it said nothing. */
  server_speculation?: ServerSpeculation
  /** usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM, SGLang); null when not sent, absent in older records. */
  cached_tokens?: number | null
  /** usage.completion_tokens_details.reasoning_tokens; null when not sent, absent in older records. */
  reasoning_tokens?: number | null
  /**
   * Arrival of the first event carrying reasoning (`reasoning_content`, `reasoning`), and of the
   * first carrying the answer (content, refusal, legacy text or a tool call); first_token_at is the
   * earlier of the two. Null when none came; absent in records of older versions.
   */
  first_reasoning_at?: number | null
  first_answer_at?: number | null
  /** Token-bearing events that carried reasoning (an event holding both counts here and as an answer). */
  reasoning_events?: number
  /**
   * Reasoning tokens of the output, whichever source had them (reasoning_token_source); the answer's
   * tokens are output_tokens minus these. Absent when the request did not reason.
   */
  reasoning_output_tokens?: number
  reasoning_token_source?: ReasoningTokenSource
  /** Multi-turn runs: the session (conversation) the request is a turn of, unique in the run. */
  session?: string
  /** Multi-turn runs: the turn's index in its session, from 0; its request carries turns 0..turn-1 and their replies. */
  turn?: number
  /** Job runs (--jobs): the job the request is a turn of, unique in the run (`<source id>#<run-wide job number>`). */
  job?: string
  /** Job runs: the turn's depth in its job's graph (0 = a root; else one more than its deepest parent). */
  job_depth?: number
  /** Job runs: the turns (indexes) this turn waited for; its request carries their branch of the history. */
  job_parents?: number[]
  /** Job runs: how many turns the job has, so a job cut short (a failure, the level's end) is known as such. */
  job_turns?: number
  /** Job runs: the tool wait after this turn's reply before its children could start, ms (client-side, not the server's). */
  tool_wait_ms?: number
  /** Sharded runs: the shard that sent it (records of a merged run keep it). */
  shard?: number
  /**
   * Runs with several endpoints or models (schedule/target-split.ts): which the request went to, as
   * indexes into the result's `endpoints` and the models given. Absent with one endpoint and one model.
   */
  target?: RequestTarget
  /** --repeat runs: which run of its level it belongs to, from 0 (absent when each level ran once, and on the control). */
  repeat?: number
  /** --paired: the pair of blocks of its level it was sent in, from 0 (its target says which side). */
  pair?: number
  /** The id of the run that wrote it (RunMeta.run_id): a file holding two runs is caught. Absent before ids existed. */
  run?: string
  /** 1 for the first attempt; retries (off by default) are separate records with attempt > 1. */
  attempt: number
  /**
   * The connection the request went out on: opened for it, or kept alive from an earlier request.
   * Absent when it failed before reaching a connection (refused, or records of older versions).
   */
  connection?: 'new' | 'reused'
  /**
   * On a connection opened for this request (h1 client): its TCP handshake, ms, DNS not counted:
   * one network round trip. It is before sent_at, so in no latency. Absent on a reused connection,
   * with undici, and in records of older versions.
   */
  connect_ms?: number
  /**
   * Set when the first try died on a reused connection before any response byte (the server had
   * closed it): the request was resent at once on a new connection, and this record is the resend.
   */
  resent?: { reason: string }
  /**
   * --cancel-share: the client aborted the request on purpose, by closing its connection once
   * `after_events` token-bearing events had arrived (a user who stops a reply). Its own outcome:
   * error stays null, yet it is no success (metrics/derive.ts's isOk) and its latency is in no
   * figure that needs the whole reply. Absent on requests that ran to their end.
   */
  cancelled?: { after_events: number }
  /** SSE events that came after `[DONE]`: ignored (not tokens, not time), counted here. */
  events_after_done?: number
  /**
   * The server's usage.completion_tokens when it was not believable (negative, not an integer, far
   * above max_tokens or far from the text received): output_tokens is then the tokenizer's count.
   */
  rejected_usage?: { completion_tokens: number; reason: string }
  /**
   * Transient, never written: the generated text, carried from the worker that received it to the
   * main thread, which counts its tokens (completeTokenCounts) so no load-generating thread ever
   * loads or runs the tokenizer.
   */
  output_text?: string
  /** Transient, never written: the reasoning part of output_text, for the same count (reasoning-counts.ts). */
  reasoning_text?: string
  /**
   * --response-schema: whether the answer validated against the schema: `valid`, `invalid`, or
   * `truncated` (invalid, and cut by max_tokens: finish_reason length). Absent on failed requests,
   * answers that called a tool instead, and runs without a schema (workload/output-check.ts).
   */
  schema_check?: OutputCheckResult
  /** --tools: the tool calls in the answer (0 = it answered in text). Absent on failed requests. */
  tool_calls?: number
  /** --tools: where the calls were read: the stream's tool-call deltas, or the answer's text (a JSON object `{"tool_call": ...}` an engine left unparsed). */
  tool_call_source?: 'deltas' | 'text'
  /** --tools, streamed: when the first tool-call delta arrived (run clock); null when none did. */
  first_tool_call_at?: number | null
  /** --tools: `none` (no call), else whether every call named an offered function and its arguments validated. */
  tool_check?: 'none' | OutputCheckResult
  /**
   * Transient, never written: each tool call as streamed (its id, name and arguments' text), for the
   * check and, in sessions and jobs, for the next turn's history.
   */
  tool_call_parts?: ToolCallPart[]
  /** Transient, never written: output_text without the tool calls' parts (reasoning first, as there), when there were calls. */
  tool_call_content?: string
}

export type OutputCheckResult = 'valid' | 'invalid' | 'truncated'

export interface ToolCallPart {
  /** The id the server gave the call; absent when it sent none. */
  id?: string
  name: string
  arguments: string
}
