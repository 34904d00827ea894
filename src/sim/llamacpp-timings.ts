/**
 * llama.cpp's `timings` object (llama-server puts it on the last chunk of a stream, next to
 * finish_reason and usage, and on a non-streamed response), from the capacity model's own timeline:
 * - prompt_ms: the prefill, from getting a slot to the first token (as llama.cpp's prompt processing);
 * - predicted_ms: from the first token to the last; predicted_n counts every output token, the first
 *   one included, as llama.cpp's n_decoded does (see test/fixtures/protocols/llamacpp_chat_timings.sse).
 * cache_n: prompt tokens the prefix cache served (prefix-cache.ts; 0 without it), not in prompt_n. A rate over 0 ms (a one-token output) is written 0,
 * since JSON has no Infinity.
 */

import type { JobTimeline } from '../model/engine.js'

export interface LlamaCppTimings {
  cache_n: number
  prompt_n: number
  prompt_ms: number
  prompt_per_token_ms: number
  prompt_per_second: number
  predicted_n: number
  predicted_ms: number
  predicted_per_token_ms: number
  predicted_per_second: number
}

export function llamaCppTimings(
  promptTokens: number,
  outputTokens: number,
  t: JobTimeline,
  cachedTokens = 0,
): LlamaCppTimings {
  const promptMs = t.firstTokenAt - t.admittedAt
  const predictedMs = t.finishedAt - t.firstTokenAt
  return {
    cache_n: cachedTokens,
    prompt_n: promptTokens,
    prompt_ms: microseconds(promptMs),
    prompt_per_token_ms: promptTokens > 0 ? promptMs / promptTokens : 0,
    prompt_per_second: promptMs > 0 ? (promptTokens * 1000) / promptMs : 0,
    predicted_n: outputTokens,
    predicted_ms: microseconds(predictedMs),
    predicted_per_token_ms: predictedMs / outputTokens,
    predicted_per_second: predictedMs > 0 ? (outputTokens * 1000) / predictedMs : 0,
  }
}

/** ms to 3 decimals, as llama.cpp reports them (it times in microseconds). */
function microseconds(ms: number): number {
  return Math.round(ms * 1000) / 1000
}
