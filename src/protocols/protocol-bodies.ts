/**
 * The request body of each protocol, as its API documents it. A body says the model, the prompt and
 * (when the protocol generates) the output length and whether to stream; nothing else, so the
 * server's defaults stay in force.
 */

import { type Prompt, promptText } from './prompt.js'

type Body = Record<string, unknown>

/** What one request's body is made of, whatever the protocol. */
export interface BodyRequest {
  model: string
  prompt: Prompt
  maxTokens: number
  stream: boolean
  /**
   * Ask the server to ignore end-of-sequence and generate at least max_tokens (`ignore_eos` and
   * `min_tokens`: vLLM, SGLang, TGI), so outputs reach the length the run is about.
   */
  ignoreEos: boolean
}

/** Chat completions: the prompt as `messages`. */
export function chatBody(request: BodyRequest): Body {
  const { prompt } = request
  return openAiBody(request, {
    messages: typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt,
  })
}

/** Legacy completions (/v1/completions): the prompt's text as `prompt`. */
export function completionsBody(request: BodyRequest): Body {
  return openAiBody(request, { prompt: promptText(request.prompt) })
}

/** The fields chat and legacy completions share around the prompt. */
function openAiBody(request: BodyRequest, prompt: Body): Body {
  const { model, maxTokens, stream } = request
  const body: Body = { model, ...prompt, max_tokens: maxTokens }
  if (request.ignoreEos) {
    body.ignore_eos = true
    body.min_tokens = maxTokens
  }
  body.stream = stream
  // Ask for usage on the stream: token counts then come from the server, not our tokenizer.
  if (stream) body.stream_options = { include_usage: true }
  return body
}

/** OpenAI Responses API: `input` (text, or the conversation as role/content items), `max_output_tokens`. */
export function responsesBody({ model, prompt, maxTokens, stream }: BodyRequest): Body {
  // Usage always comes on response.completed: there is no stream_options to ask for it.
  return { model, input: prompt, max_output_tokens: maxTokens, stream }
}

/**
 * Anthropic Messages: `messages` of user and assistant turns, `max_tokens` (required by the API),
 * and the system prompt lifted out of the messages into the top-level `system` the API wants.
 */
export function messagesBody({ model, prompt, maxTokens, stream }: BodyRequest): Body {
  const messages = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content)
  const body: Body = { model, max_tokens: maxTokens }
  if (system.length > 0) body.system = system.join('\n\n')
  body.messages = messages.filter((message) => message.role !== 'system')
  body.stream = stream
  return body
}

/** Embeddings: the prompt's text as `input`; no output length, never streamed. */
export function embeddingsBody({ model, prompt }: BodyRequest): Body {
  return { model, input: promptText(prompt) }
}
