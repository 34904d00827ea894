import { type Protocol, protocolOfEndpoint } from '../protocol.js'
import type { ChatMessage } from './dataset.js'
import { embeddingsBody, messagesBody, responsesBody } from './protocol-bodies.js'

/** Builds the JSON request body, serialized once per prompt and reused as bytes. */

export interface BodyOptions {
  model: string
  endpoint: string
  /** The body's shape; when absent, the one the endpoint names. */
  protocol?: Protocol
  stream: boolean
  /**
   * Ask the server to ignore end-of-sequence and generate at least max_tokens (`ignore_eos` and
   * `min_tokens`: vLLM, SGLang, TGI), so outputs reach the length the run is about.
   */
  ignoreEos?: boolean
}

/** A prompt as text (one user message) or as a conversation (a dataset entry). */
export type Prompt = string | readonly ChatMessage[]

export function buildBody(options: BodyOptions, prompt: Prompt, maxTokens: number): Buffer {
  const { model, stream } = options
  const protocol = options.protocol ?? protocolOfEndpoint(options.endpoint)
  switch (protocol) {
    case 'responses':
      return Buffer.from(JSON.stringify(responsesBody(model, prompt, maxTokens, stream)))
    case 'messages':
      return Buffer.from(JSON.stringify(messagesBody(model, prompt, maxTokens, stream)))
    case 'embeddings':
      return Buffer.from(JSON.stringify(embeddingsBody(model, promptText(prompt))))
    default:
      return chatBody(options, prompt, maxTokens, protocol === 'completions')
  }
}

/** Chat completions, or legacy completions when the endpoint is /v1/completions. */
function chatBody(options: BodyOptions, prompt: Prompt, maxTokens: number, legacy: boolean): Buffer {
  const body: Record<string, unknown> = { model: options.model }
  if (legacy) body.prompt = promptText(prompt)
  else body.messages = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt
  body.max_tokens = maxTokens
  if (options.ignoreEos === true) {
    body.ignore_eos = true
    body.min_tokens = maxTokens
  }
  body.stream = options.stream
  // Ask for usage on the stream: token counts then come from the server, not our tokenizer.
  if (options.stream) body.stream_options = { include_usage: true }
  return Buffer.from(JSON.stringify(body))
}

/** The text of a prompt for /v1/completions: a conversation's contents, one per line. */
export function promptText(prompt: Prompt): string {
  return typeof prompt === 'string' ? prompt : prompt.map((message) => message.content).join('\n')
}
