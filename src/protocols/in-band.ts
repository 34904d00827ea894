/**
 * What an engine says about a request inside the response itself: llama.cpp's `timings` (server
 * prefill and decode time) and the token details of OpenAI-style `usage` (prompt tokens served from
 * a cache, reasoning tokens). Only the chunk that carries `timings` or `usage` is looked at, so the
 * token chunks of a stream cost two property reads and allocate nothing.
 */
import { isObject, type Json } from '../json-object.js'
import type { ServerSpeculation, ServerTimings } from '../records/types.js'

export interface InBand {
  timings: ServerTimings | null
  cached_tokens: number | null
  reasoning_tokens: number | null
  /** Speculative decoding: llama.cpp's timings.draft_n*, SGLang's meta_info.spec_*; absent when not said. */
  speculation?: ServerSpeculation
}

/** The in-band figures of one response object (a chunk or a whole body), or null when it has none. */
export function readInBand(obj: Json): InBand | null {
  const timings = obj.timings
  const usage = obj.usage
  const meta = obj.meta_info
  const hasTimings = isObject(timings)
  if (!hasTimings && !isObject(usage) && !isObject(meta)) return null
  const promptDetails = isObject(usage) ? usage.prompt_tokens_details : null
  const completionDetails = isObject(usage) ? usage.completion_tokens_details : null
  const found: InBand = {
    timings: hasTimings ? readTimings(timings) : null,
    cached_tokens: isObject(promptDetails) ? tokenCount(promptDetails.cached_tokens) : null,
    reasoning_tokens: isObject(completionDetails) ? tokenCount(completionDetails.reasoning_tokens) : null,
  }
  const speculation = readSpeculation(hasTimings ? timings : null, isObject(meta) ? meta : null)
  if (speculation !== null) found.speculation = speculation
  return found.timings === null &&
    found.cached_tokens === null &&
    found.reasoning_tokens === null &&
    speculation === null
    ? null
    : found
}

/**
 * Speculative decoding as the engine reports it: llama.cpp's timings (`draft_n`, `draft_n_accepted`,
 * builds since mid-2025) or SGLang's meta_info (`spec_verify_ct`, `spec_accept_rate`,
 * `spec_accept_length`, `spec_draft_token_num`, `spec_accept_token_num`). Null when neither says.
 */
function readSpeculation(timings: Json | null, meta: Json | null): ServerSpeculation | null {
  const read: ServerSpeculation = {
    draft_tokens: tokenCount(timings?.draft_n) ?? tokenCount(meta?.spec_draft_token_num),
    accepted_tokens: tokenCount(timings?.draft_n_accepted) ?? tokenCount(meta?.spec_accept_token_num),
    steps: tokenCount(meta?.spec_verify_ct),
    accept_length: duration(meta?.spec_accept_length),
    accept_rate: duration(meta?.spec_accept_rate),
  }
  return Object.values(read).every((value) => value === null) ? null : read
}

/** A timings object counts when it carries a prefill or decode time; the rest is kept as sent. */
function readTimings(timings: Json): ServerTimings | null {
  const read: ServerTimings = {
    prompt_n: tokenCount(timings.prompt_n),
    prompt_ms: duration(timings.prompt_ms),
    predicted_n: tokenCount(timings.predicted_n),
    predicted_ms: duration(timings.predicted_ms),
    cache_n: tokenCount(timings.cache_n),
  }
  return read.prompt_ms === null && read.predicted_ms === null ? null : read
}

/** A token count: a non-negative integer, else unknown (a malformed field is never a crash). */
export function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null
}

/** Milliseconds (or any non-negative figure): a finite non-negative number, else unknown. */
function duration(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null
}
