/**
 * The OpenAI Responses API (`POST /v1/responses`) read as ChunkInfo. Its stream is typed events
 * (`event: response.output_text.delta` plus a `data:` object whose `type` repeats the name), with no
 * `[DONE]`: `response.completed` (or `response.incomplete`, at max_output_tokens) is the end and
 * carries the usage: input_tokens, output_tokens and their details (cached_tokens, reasoning_tokens).
 * Reasoning arrives as `response.reasoning_summary_text.delta` (a summary of the thinking, the only
 * reasoning OpenAI streams) or `response.reasoning_text.delta` (open models served by vLLM and others).
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

/** One SSE event of a Responses stream; `eventName` (the `event:` line) is used when the data has no `type`. */
export function interpretResponsesEvent(eventName: string, data: string): ChunkInfo {
  const obj = parseEventObject(data)
  if (obj === null) return data === '[DONE]' ? endChunk() : malformedChunk()
  const type = typeof obj.type === 'string' ? obj.type : eventName
  switch (type) {
    case 'response.output_text.delta':
    case 'response.refusal.delta':
    case 'response.function_call_arguments.delta':
      return deltaChunk(obj.delta, false)
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      return deltaChunk(obj.delta, true)
    case 'response.output_item.added':
      // A function call's name is generated output, as in a chat tool-call delta.
      return isObject(obj.item) && obj.item.type === 'function_call'
        ? deltaChunk(obj.item.name, false)
        : quietChunk()
    case 'response.completed':
    case 'response.incomplete': {
      const info = readResponse(isObject(obj.response) ? obj.response : {})
      info.done = true
      return info
    }
    case 'response.failed':
      return errorChunk(isObject(obj.response) ? obj.response.error : null, 'response.failed')
    case 'error':
      return errorChunk(obj, 'error event')
    default:
      return quietChunk()
  }
}

/** A non-streamed Responses body: its output items' text, usage and status. */
export function interpretResponsesBody(obj: Json): ChunkInfo {
  if (obj.status === 'failed' || isObject(obj.error))
    return errorChunk(obj.error, `response status ${String(obj.status)}`)
  const info = readResponse(obj)
  const output = Array.isArray(obj.output) ? obj.output : []
  for (const item of output) if (isObject(item)) readItem(item, info)
  info.tokenBearing = info.reasoningBearing || info.answerBearing
  return info
}

/** Adds one output item's generated text (message, reasoning, function call) to info. */
function readItem(item: Json, info: ChunkInfo): void {
  const add = (text: unknown, reasoning: boolean): void => {
    if (typeof text !== 'string' || text === '') return
    info.text += text
    if (reasoning) {
      info.reasoningBearing = true
      info.reasoningText = (info.reasoningText ?? '') + text
    } else info.answerBearing = true
  }
  if (item.type === 'function_call') {
    add(item.name, false)
    add(item.arguments, false)
    return
  }
  const reasoning = item.type === 'reasoning'
  for (const list of [item.summary, item.content]) {
    if (!Array.isArray(list)) continue
    for (const part of list) {
      if (!isObject(part)) continue
      add(part.text, reasoning)
      add(part.refusal, false)
    }
  }
}

/** Usage, details and finish reason of a response object (the terminal event's, or a whole body). */
function readResponse(response: Json): ChunkInfo {
  const info = quietChunk()
  const usage = isObject(response.usage) ? response.usage : {}
  const inputDetails = isObject(usage.input_tokens_details) ? usage.input_tokens_details : {}
  const outputDetails = isObject(usage.output_tokens_details) ? usage.output_tokens_details : {}
  setUsage(
    info,
    { prompt_tokens: tokenCount(usage.input_tokens), completion_tokens: tokenCount(usage.output_tokens) },
    tokenCount(inputDetails.cached_tokens),
    tokenCount(outputDetails.reasoning_tokens),
  )
  info.finishReason = finishReasonOf(response)
  return info
}

/** Said in chat's words, so summaries count stops and truncations the same for every protocol. */
function finishReasonOf(response: Json): string | null {
  if (response.status === 'completed') return 'stop'
  if (response.status !== 'incomplete') return null
  const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : null
  return reason === 'max_output_tokens' ? 'length' : typeof reason === 'string' ? reason : 'incomplete'
}

function endChunk(): ChunkInfo {
  const info = quietChunk()
  info.done = true
  return info
}
