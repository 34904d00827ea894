/**
 * What one SSE `data:` payload of an OpenAI-compatible stream says, for a benchmark: whether it
 * carries generated output (a token-bearing event), the text to count when the server sends no
 * usage, usage, finish reason and errors. Handles chat chunks, legacy completions chunks and
 * non-streamed response bodies; tolerates the shapes seen in the wild (explicit nulls,
 * `choices: []`, `reasoning_content`, tool-call deltas, n > 1 choices).
 */

import { isObject, type Json } from '../json-object.js'
import { type InBand, readInBand } from './in-band.js'

export interface Usage {
  prompt_tokens: number | null
  /** Null when the event says only the prompt's size (Anthropic's message_start). */
  completion_tokens: number | null
}

export interface ChunkInfo {
  done: boolean
  /** At least one choice carries generated output: content, reasoning, refusal, text or a tool call. */
  tokenBearing: boolean
  /** Part of that output is reasoning (the model thinking before it answers). */
  reasoningBearing: boolean
  /** Part of that output is the answer: content, refusal, legacy text or a tool call. */
  answerBearing: boolean
  /** All generated text in the chunk (every choice), for the tokenizer fallback. */
  text: string
  /** The reasoning part of `text`, when there is one: the reasoning count's tokenizer fallback. */
  reasoningText?: string
  usage: Usage | null
  /** llama.cpp timings and usage token details, on the chunk that carries them (see in-band.ts). */
  inBand: InBand | null
  finishReason: string | null
  /** An error reported inside a 200 stream, or null. */
  error: string | null
  /** The payload is not JSON (and not [DONE]). */
  malformed: boolean
  /** Tool-call deltas (chat `tool_calls`): each one's index, name part and arguments part; absent when none. */
  toolCalls?: ToolCallDelta[]
  /** The tail of `text` that is tool-call names and arguments (the rest is reasoning and content); absent when none. */
  toolCallChars?: number
}

export interface ToolCallDelta {
  index: number
  /** The call's id, on the delta that opens it ('' on the others, or when the server sent none). */
  id: string
  name: string
  arguments: string
}

/** Delta fields that carry the answer. */
const ANSWER_KEYS = ['content', 'refusal'] as const
/** Delta fields that carry reasoning (vLLM and DeepSeek `reasoning_content`; OpenRouter, newer vLLM `reasoning`). */
const REASONING_KEYS = ['reasoning_content', 'reasoning'] as const

/** A fresh ChunkInfo that says nothing: the start of every interpreter's answer. */
export function blankChunk(): ChunkInfo {
  return {
    done: false,
    tokenBearing: false,
    reasoningBearing: false,
    answerBearing: false,
    text: '',
    usage: null,
    inBand: null,
    finishReason: null,
    error: null,
    malformed: false,
  }
}

const DONE: ChunkInfo = { ...blankChunk(), done: true }

export function interpretChunk(data: string): ChunkInfo {
  if (data === '[DONE]') return DONE
  let parsed: unknown
  try {
    parsed = JSON.parse(data)
  } catch {
    return { ...DONE, done: false, malformed: true }
  }
  if (!isObject(parsed)) return { ...DONE, done: false, malformed: true }
  return interpretObject(parsed)
}

/** Shared by streamed chunks and non-streamed bodies (whose choices carry `message`). */
export function interpretObject(obj: Json): ChunkInfo {
  const info: ChunkInfo = {
    done: false,
    tokenBearing: false,
    reasoningBearing: false,
    answerBearing: false,
    text: '',
    usage: readUsage(obj.usage),
    inBand: readInBand(obj),
    finishReason: null,
    error: readError(obj),
    malformed: false,
  }
  const choices = obj.choices
  if (!Array.isArray(choices)) return info
  for (const choice of choices) {
    if (!isObject(choice)) continue
    if (typeof choice.finish_reason === 'string') info.finishReason = choice.finish_reason
    readChoice(choice, info)
  }
  info.tokenBearing = info.reasoningBearing || info.answerBearing
  return info
}

/** Adds one choice's generated output (none for role-only, empty or finish-only choices) to info. */
function readChoice(choice: Json, info: ChunkInfo): void {
  if (typeof choice.text === 'string' && choice.text !== '') {
    info.text += choice.text
    info.answerBearing = true
  }
  const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : null
  if (delta === null) return
  for (const key of REASONING_KEYS) {
    const value = delta[key]
    if (typeof value === 'string' && value !== '') {
      info.text += value
      info.reasoningText = (info.reasoningText ?? '') + value
      info.reasoningBearing = true
    }
  }
  for (const key of ANSWER_KEYS) {
    const value = delta[key]
    if (typeof value === 'string' && value !== '') {
      info.text += value
      info.answerBearing = true
    }
  }
  const toolCalls = delta.tool_calls
  if (!Array.isArray(toolCalls)) return
  for (const [position, call] of toolCalls.entries()) {
    const fn = isObject(call) && isObject(call.function) ? call.function : null
    if (fn === null) continue
    // A non-streamed message may carry the arguments as an object rather than its JSON text.
    const args =
      typeof fn.arguments === 'string'
        ? fn.arguments
        : isObject(fn.arguments)
          ? JSON.stringify(fn.arguments)
          : ''
    const name = typeof fn.name === 'string' ? fn.name : ''
    for (const part of [name, args]) {
      if (part !== '') {
        info.text += part
        info.toolCallChars = (info.toolCallChars ?? 0) + part.length
        info.answerBearing = true
      }
    }
    const index = isObject(call) && typeof call.index === 'number' ? call.index : position
    const id = isObject(call) && typeof call.id === 'string' ? call.id : ''
    if (info.toolCalls === undefined) info.toolCalls = []
    info.toolCalls.push({ index, id, name, arguments: args })
  }
}

function readUsage(value: unknown): Usage | null {
  if (!isObject(value) || typeof value.completion_tokens !== 'number') return null
  return {
    prompt_tokens: typeof value.prompt_tokens === 'number' ? value.prompt_tokens : null,
    completion_tokens: value.completion_tokens,
  }
}

/**
 * Errors inside a 200 stream come in several shapes: OpenAI-style `{"error": {...}}` (mock-llm,
 * newer vLLM), TGI's `{"error": "...", "error_type": ...}`, older vLLM's top-level
 * `{"object": "error", "message": ...}`. Their code and type stay in front of the message (see
 * withCode): they tell an overloaded server (500 server_error) from a refused request (400).
 */
function readError(obj: Json): string | null {
  const error = obj.error
  if (typeof error === 'string') return withCode(error, null, obj.error_type)
  if (isObject(error))
    return withCode(
      typeof error.message === 'string' ? error.message : JSON.stringify(error),
      error.code,
      error.type,
    )
  if (obj.object === 'error')
    return withCode(
      typeof obj.message === 'string' ? obj.message : 'error object in stream',
      obj.code,
      obj.type,
    )
  return null
}

/**
 * The words of an SSE error event (`event: error`, or llama.cpp's `error:` field), whose payload is
 * often JSON such as `{"code":500,"message":"Input prompt is too big ...","type":"server_error"}`:
 * its message after its code and type ("500 server_error: Input prompt is too big ...") when it
 * has a message, else the text as it came.
 */
export function errorEventMessage(text: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  if (!isObject(parsed)) return text
  if (typeof parsed.message === 'string') return withCode(parsed.message, parsed.code, parsed.type)
  return readError(parsed) ?? text
}

/**
 * "500 server_error: message": the code when it is a number, the type, then a code that is a word
 * (OpenAI's "rate_limit_exceeded"), each when present.
 */
export function withCode(message: string, code: unknown, type: unknown): string {
  const numeric = typeof code === 'number' || (typeof code === 'string' && /^\d+$/.test(code))
  const words = [
    numeric ? String(code) : null,
    // A type of "error" (the Responses API's error event) says nothing the words do not.
    typeof type === 'string' && type !== '' && type !== 'error' ? type : null,
    !numeric && typeof code === 'string' && code !== '' && code !== type ? code : null,
  ].filter((word) => word !== null)
  return words.length === 0 ? message : `${words.join(' ')}: ${message}`
}
