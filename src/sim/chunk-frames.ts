/**
 * The OpenAI chunk formats of the simulator's answers: chat completions and legacy completions share
 * the stream's shape (a chunk per token, `[DONE]`) and differ in their objects' names and where a
 * token goes. The other protocols answer in events and bodies of their own (protocol-frames.ts); the
 * table below says which protocol answers how, so the server looks it up rather than naming one.
 */

import type { Protocol } from '../protocols/names.js'
import { chatReasoningFrame, type ReasoningFrame } from './reasoning.js'
import { type SimToolCall, toolCallChunks } from './tool-calls.js'

export interface Usage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: { cached_tokens: number }
  completion_tokens_details?: { reasoning_tokens: number }
}

/** The pre-built text around every SSE event of one request, so a token costs one string concat. */
export interface Frames {
  id: string
  created: number
  model: string
  /** Chat only: the role chunk sent with the headers. */
  open: string | null
  tokenPrefix: string
  tokenSuffix: string
  /** The first answer token's prefix when it differs (a tool call's opening: its id and name); absent = tokenPrefix. */
  firstTokenPrefix?: string
  /** A reasoning token's event; null when the format has no reasoning field (no reasoning phase then). */
  reasoning: ReasoningFrame | null
  /** `tail`: more top-level fields after "choices", each with a leading comma (`timings`). */
  finish(reason: string, tail?: string): string
  usage(u: Usage): string
  /** The non-streamed body's `object`. */
  object: string
  /** The non-streamed body's one choice. */
  choice(text: string, reasoning: string | null, finishReason: string): Record<string, unknown>
}

/** What differs between the two chunk formats; `choice` is the text that opens a chunk's one choice. */
interface ChunkFormat {
  idPrefix: string
  chunkObject: string
  object: string
  frames(choice: string): Pick<Frames, 'open' | 'tokenPrefix' | 'tokenSuffix' | 'reasoning' | 'finish'>
  choice: Frames['choice']
  /** Whether its chunks carry tool-call deltas (chat's `tool_calls`). */
  toolCalls: boolean
}

const CHAT_CHUNKS: ChunkFormat = {
  idPrefix: 'chatcmpl',
  chunkObject: 'chat.completion.chunk',
  object: 'chat.completion',
  toolCalls: true,
  frames: (choice) => ({
    open: `${choice}"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`,
    tokenPrefix: `${choice}"delta":{"content":"`,
    tokenSuffix: '"},"finish_reason":null}]}\n\n',
    reasoning: chatReasoningFrame(choice),
    finish: (reason, tail = '') => `${choice}"delta":{},"finish_reason":"${reason}"}]${tail}}\n\n`,
  }),
  choice: (text, reasoning, finishReason) => ({
    index: 0,
    message: {
      role: 'assistant',
      ...(reasoning === null ? {} : { reasoning_content: reasoning }),
      content: text,
    },
    logprobs: null,
    finish_reason: finishReason,
  }),
}

const COMPLETION_CHUNKS: ChunkFormat = {
  idPrefix: 'cmpl',
  chunkObject: 'text_completion',
  object: 'text_completion',
  toolCalls: false,
  frames: (choice) => ({
    open: null,
    tokenPrefix: `${choice}"text":"`,
    tokenSuffix: '","logprobs":null,"finish_reason":null}]}\n\n',
    reasoning: null,
    finish: (reason, tail = '') =>
      `${choice}"text":"","logprobs":null,"finish_reason":"${reason}"}]${tail}}\n\n`,
  }),
  choice: (text, _reasoning, finishReason) => ({
    index: 0,
    text,
    logprobs: null,
    finish_reason: finishReason,
  }),
}

/** Each protocol's chunk format; null: it answers in events and bodies of its own (protocol-frames.ts). */
const CHUNK_FORMATS: Readonly<Record<Protocol, ChunkFormat | null>> = {
  chat: CHAT_CHUNKS,
  completions: COMPLETION_CHUNKS,
  responses: null,
  messages: null,
  embeddings: null,
}

/**
 * The frames of request `requestNo`'s answer, or null when its protocol does not answer in OpenAI
 * chunks; a chat answer that is `toolCall` (tool-calls.ts) streams the call instead of text.
 */
export function chunkFrames(
  protocol: Protocol,
  model: string,
  requestNo: number,
  toolCall: SimToolCall | null = null,
): Frames | null {
  const format = CHUNK_FORMATS[protocol]
  if (format === null) return null
  const id = `${format.idPrefix}-llmbench-${requestNo}`
  const created = Math.floor(Date.now() / 1000)
  const head = `data: {"id":"${id}","object":"${format.chunkObject}","created":${created},"model":${JSON.stringify(model)},`
  const choice = `${head}"choices":[{"index":0,`
  return {
    id,
    created,
    model,
    ...format.frames(choice),
    usage: (u) => `${head}"choices":[],"usage":${JSON.stringify(u)}}\n\n`,
    object: format.object,
    choice: format.choice,
    // A format with no tool-call deltas answers in text whatever was asked.
    ...(toolCall !== null && format.toolCalls ? toolCallChunks(choice, toolCall) : {}),
  }
}
