import type { RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk, ttftMs } from './derive.js'
import { type Distribution, round } from './distribution.js'

/**
 * A level's figures from what the engine itself reported in its responses (llama.cpp `timings`,
 * usage token details), beside the client's: where the client's TTFT went. Over successful
 * measured requests; null (in_band absent from the level) where no request carried any.
 */
export interface InBandFigures {
  /** Successful requests that carried llama.cpp timings. */
  requests_with_timings: number
  /** Server prefill time per request: timings.prompt_ms. */
  server_prefill_ms: Distribution
  /** Server decode time per generated token, per request: timings.predicted_ms / predicted_n. */
  server_decode_ms_per_token: Distribution
  /**
   * Client TTFT − server prefill, per request: the time before the engine started the prefill (HTTP
   * layer, waiting for a slot, network) plus the first token's way back.
   */
  queue_ms: Distribution
  /** Cached prompt tokens / prompt tokens, over the requests that said (or, on llama.cpp, showed) how many were cached; null = none did. */
  cached_prompt_share: number | null
  /** Sum of usage.completion_tokens_details.reasoning_tokens; null = no request sent it. */
  reasoning_tokens: number | null
}

export function inBandFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): InBandFigures | null {
  return accumulate(records, inBandAccumulator(percentiles))
}

/** The same, fed record by record. */
export function inBandAccumulator(percentiles: readonly number[]): Accumulator<InBandFigures | null> {
  const prefill = new Samples()
  const decodePerToken = new Samples()
  const queue = new Samples()
  let withTimings = 0
  let cached = 0
  let promptOfCached = 0
  let withCacheFigure = 0
  let reasoning: number | null = null
  return {
    add(record) {
      if (!isOk(record)) return
      const timings = record.server_timings ?? null
      if (timings !== null) {
        withTimings++
        if (timings.prompt_ms !== null) {
          prefill.push(timings.prompt_ms)
          const ttft = ttftMs(record)
          // Hidden reasoning: the first event came after the thinking, not after the prefill.
          if (ttft !== null && unstreamedReasoningTokens(record) === 0) queue.push(ttft - timings.prompt_ms)
        }
        if (timings.predicted_ms !== null && timings.predicted_n !== null && timings.predicted_n > 0)
          decodePerToken.push(timings.predicted_ms / timings.predicted_n)
      }
      const cachedHere = cachedPromptTokens(record)
      const prompt = promptTokens(record)
      if (cachedHere !== null && prompt !== null && prompt > 0) {
        withCacheFigure++
        cached += cachedHere
        promptOfCached += prompt
      }
      if (record.reasoning_tokens != null) reasoning = (reasoning ?? 0) + record.reasoning_tokens
    },
    result() {
      if (withTimings === 0 && withCacheFigure === 0 && reasoning === null) return null
      return {
        requests_with_timings: withTimings,
        server_prefill_ms: prefill.distribution(percentiles),
        server_decode_ms_per_token: decodePerToken.distribution(percentiles),
        queue_ms: queue.distribution(percentiles),
        cached_prompt_share: withCacheFigure === 0 ? null : round(cached / promptOfCached, 4),
        reasoning_tokens: reasoning,
      }
    },
  }
}

/**
 * Prompt tokens the server took from its cache: llama.cpp's timings.cache_n, else
 * usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM, SGLang), else what prompt_n leaves out.
 */
export function cachedPromptTokens(record: RequestRecord): number | null {
  return record.server_timings?.cache_n ?? record.cached_tokens ?? cachedByPromptN(record)
}

/**
 * llama.cpp builds before cache_n: prompt_n counts only the prompt tokens computed, so the rest of
 * usage.prompt_tokens came from the slot's cache (the same prompt sent twice: 31 prompt tokens, prompt_n 1).
 */
function cachedByPromptN(record: RequestRecord): number | null {
  const promptN = record.server_timings?.prompt_n ?? null
  if (promptN === null || record.input_tokens === null || record.input_tokens < promptN) return null
  return record.input_tokens - promptN
}

/**
 * The request's prompt tokens: the server's usage.prompt_tokens, else llama.cpp's computed plus
 * cached tokens (prompt_n leaves the cached ones out).
 */
export function promptTokens(record: RequestRecord): number | null {
  if (record.input_tokens !== null) return record.input_tokens
  const timings = record.server_timings
  if (timings?.prompt_n == null) return null
  return timings.prompt_n + (timings.cache_n ?? 0)
}
