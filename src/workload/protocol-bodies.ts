/**
 * The request bodies of the protocols other than chat and legacy completions, each as its API
 * documents it. A body says the model, the prompt and (when the protocol generates) the output
 * length and whether to stream; nothing else, so the server's defaults stay in force.
 */

import type { ChatMessage } from './dataset.js'

type Prompt = string | readonly ChatMessage[]
type Body = Record<string, unknown>

/** OpenAI Responses API: `input` (text, or the conversation as role/content items), `max_output_tokens`. */
export function responsesBody(model: string, prompt: Prompt, maxTokens: number, stream: boolean): Body {
  // Usage always comes on response.completed: there is no stream_options to ask for it.
  return { model, input: prompt, max_output_tokens: maxTokens, stream }
}

/**
 * Anthropic Messages: `messages` of user and assistant turns, `max_tokens` (required by the API),
 * and the system prompt lifted out of the messages into the top-level `system` the API wants.
 */
export function messagesBody(model: string, prompt: Prompt, maxTokens: number, stream: boolean): Body {
  const messages = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content)
  const body: Body = { model, max_tokens: maxTokens }
  if (system.length > 0) body.system = system.join('\n\n')
  body.messages = messages.filter((message) => message.role !== 'system')
  body.stream = stream
  return body
}

/** Embeddings: the prompt's text as `input`; no output length, never streamed. */
export function embeddingsBody(model: string, text: string): Body {
  return { model, input: text }
}
