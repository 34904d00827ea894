/**
 * Where a server finds what a request of each protocol asks: its prompt, its output length and
 * whether a stream should end with the token counts. The other side of protocol-bodies.ts: llmbench
 * writes a body with those, its simulator reads one with these (sim/server.ts), through the
 * protocol's descriptor (wire-protocol.ts).
 */

import { isObject } from '../json-object.js'

type Json = Record<string, unknown>

export interface RequestFields {
  /**
   * The prompt as the server counts it: chat-like turns ({content}) when `countsTurns`, else the
   * completions prompt as sent (text, texts or token ids). Null or of another type when the field is
   * missing or wrong: the count then fails and `promptRefusal` is said.
   */
  prompt(body: Json): unknown
  /** Whether the prompt is counted as turns with a chat template around them, rather than as one text. */
  countsTurns: boolean
  /** Said (a 400) when the prompt's field cannot be read. */
  promptRefusal: string
  /** The output length asked for; undefined when the body leaves it to the server's default. */
  maxTokens(body: Json): unknown
  /** The texts the request asks about at once (embeddings' vectors); 1 for every generating protocol. */
  inputs(body: Json): number
  /**
   * Whether a streamed answer ends with the token counts (usage): chat and legacy completions send
   * them only when `stream_options.include_usage` asks (protocol-bodies.ts always does); the
   * Responses API, Messages and embeddings always send them.
   */
  streamsUsage(body: Json): boolean
}

const ONE_PROMPT = (): number => 1
const ALWAYS = (): boolean => true
const INPUT_REFUSAL = "'input' must be a string or an array"
const MESSAGES_REFUSAL = "'messages' must be an array of messages"

/** OpenAI's `stream_options: {include_usage: true}`. */
function asksForUsage(body: Json): boolean {
  return isObject(body.stream_options) && body.stream_options.include_usage === true
}

/** A text `input`, or the items of an array one, as turns. */
function inputTurns(body: Json, item: (value: unknown) => unknown): unknown[] | null {
  const { input } = body
  if (typeof input === 'string') return [{ content: input }]
  return Array.isArray(input) ? input.map(item) : null
}

/** Chat completions: `messages`; the output length as `max_completion_tokens` (newer) or `max_tokens`. */
export const CHAT_FIELDS: RequestFields = {
  prompt: (body) => body.messages,
  countsTurns: true,
  promptRefusal: MESSAGES_REFUSAL,
  maxTokens: (body) => body.max_completion_tokens ?? body.max_tokens,
  inputs: ONE_PROMPT,
  streamsUsage: asksForUsage,
}

/** Legacy completions: `prompt`, counted as text; the output length as chat's. */
export const COMPLETIONS_FIELDS: RequestFields = {
  ...CHAT_FIELDS,
  prompt: (body) => body.prompt,
  countsTurns: false,
  promptRefusal: "'prompt' must be a string or an array",
}

/** The Responses API: `input` (text, or role/content items), `max_output_tokens`. */
export const RESPONSES_FIELDS: RequestFields = {
  prompt: (body) => inputTurns(body, (item) => item),
  countsTurns: true,
  promptRefusal: INPUT_REFUSAL,
  maxTokens: (body) => body.max_output_tokens,
  inputs: ONE_PROMPT,
  streamsUsage: ALWAYS,
}

/** Anthropic Messages: the top-level `system` as a turn before `messages`; `max_tokens`. */
export const MESSAGES_FIELDS: RequestFields = {
  prompt: (body) => {
    if (!Array.isArray(body.messages)) return null
    const system = typeof body.system === 'string' ? [{ content: body.system }] : []
    return [...system, ...body.messages]
  },
  countsTurns: true,
  promptRefusal: MESSAGES_REFUSAL,
  maxTokens: (body) => body.max_tokens,
  inputs: ONE_PROMPT,
  streamsUsage: ALWAYS,
}

/** Embeddings: `input`, a text or texts, one vector each; no output, so one engine step. */
export const EMBEDDINGS_FIELDS: RequestFields = {
  prompt: (body) => inputTurns(body, (text) => ({ content: text })),
  countsTurns: true,
  promptRefusal: INPUT_REFUSAL,
  maxTokens: () => 1,
  inputs: (body) => (Array.isArray(body.input) ? body.input.length : 1),
  streamsUsage: ALWAYS,
}
