/**
 * Anthropic Messages (`POST /v1/messages`) read as ChunkInfo. The stream is typed events:
 * `message_start` (usage.input_tokens, and the cache's cache_read_input_tokens and
 * cache_creation_input_tokens), `content_block_delta` whose delta is `text_delta`, `thinking_delta`
 * (reasoning) or `input_json_delta` (a tool call's arguments), `message_delta` (stop_reason and the
 * cumulative usage.output_tokens), `message_stop` (the end: there is no `[DONE]`); `ping` is a
 * keep-alive. Anthropic's input_tokens leaves out the tokens read from or written to the cache, so
 * the prompt's size is their sum, as OpenAI's prompt_tokens counts cached tokens in.
 */

import type { ChunkInfo } from './chunk.js'
import {
  deltaChunk,
  errorChunk,
  isObject,
  type Json,
  malformedChunk,
  parseEventObject,
  quietChunk,
  setUsage,
  tokenCount,
} from './event-chunk.js'

/** One SSE event of a Messages stream; `eventName` (the `event:` line) is used when the data has no `type`. */
export function interpretMessagesEvent(eventName: string, data: string): ChunkInfo {
  const obj = parseEventObject(data)
  if (obj === null) return malformedChunk()
  const type = typeof obj.type === 'string' ? obj.type : eventName
  switch (type) {
    case 'content_block_delta':
      return readDelta(isObject(obj.delta) ? obj.delta : {})
    case 'content_block_start':
      // A tool call's name is generated output, as in a chat tool-call delta.
      return isObject(obj.content_block) && obj.content_block.type === 'tool_use'
        ? deltaChunk(obj.content_block.name, false)
        : quietChunk()
    case 'message_start':
      return readUsage(quietChunk(), isObject(obj.message) ? obj.message.usage : null, false)
    case 'message_delta': {
      const info = readUsage(quietChunk(), obj.usage, true)
      const delta = isObject(obj.delta) ? obj.delta : {}
      info.finishReason = finishReasonOf(delta.stop_reason)
      return info
    }
    case 'message_stop': {
      const info = quietChunk()
      info.done = true
      return info
    }
    case 'error':
      return errorChunk(obj.error, 'error event')
    default:
      return quietChunk()
  }
}

/** A non-streamed Messages body: its content blocks' text, usage and stop reason. */
export function interpretMessagesBody(obj: Json): ChunkInfo {
  if (obj.type === 'error') return errorChunk(obj.error, 'error body')
  const info = readUsage(quietChunk(), obj.usage, true)
  info.finishReason = finishReasonOf(obj.stop_reason)
  const content = Array.isArray(obj.content) ? obj.content : []
  for (const block of content) {
    if (!isObject(block)) continue
    const piece =
      block.type === 'tool_use'
        ? deltaChunk(`${String(block.name)}${JSON.stringify(block.input ?? {})}`, false)
        : deltaChunk(block.type === 'thinking' ? block.thinking : block.text, block.type === 'thinking')
    info.text += piece.text
    info.reasoningBearing ||= piece.reasoningBearing
    info.answerBearing ||= piece.answerBearing
  }
  info.tokenBearing = info.reasoningBearing || info.answerBearing
  return info
}

function readDelta(delta: Json): ChunkInfo {
  switch (delta.type) {
    case 'text_delta':
      return deltaChunk(delta.text, false)
    case 'thinking_delta':
      return deltaChunk(delta.thinking, true)
    case 'input_json_delta':
      return deltaChunk(delta.partial_json, false)
    default:
      // signature_delta, citations_delta: no generated tokens.
      return quietChunk()
  }
}

/**
 * message_start's usage says the prompt (its output_tokens is a placeholder, not a count);
 * message_delta's says the output so far, and newer servers repeat the prompt's figures there.
 */
function readUsage(info: ChunkInfo, usage: unknown, withOutput: boolean): ChunkInfo {
  if (!isObject(usage)) return info
  const input = tokenCount(usage.input_tokens)
  const cacheRead = tokenCount(usage.cache_read_input_tokens)
  const cacheWrite = tokenCount(usage.cache_creation_input_tokens)
  const prompt = input === null ? null : input + (cacheRead ?? 0) + (cacheWrite ?? 0)
  return setUsage(
    info,
    { prompt_tokens: prompt, completion_tokens: withOutput ? tokenCount(usage.output_tokens) : null },
    cacheRead,
    null,
  )
}

/** Said in chat's words, so summaries count stops and truncations the same for every protocol. */
function finishReasonOf(reason: unknown): string | null {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop'
    case 'max_tokens':
      return 'length'
    case 'tool_use':
      return 'tool_calls'
    default:
      return typeof reason === 'string' ? reason : null
  }
}
