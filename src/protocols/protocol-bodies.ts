/**
 * The request body of each protocol, as its API documents it. A body says the model, the prompt and
 * (when the protocol generates) the output length and whether to stream, and the media and
 * structured output its descriptor says it carries; nothing else, so the server's defaults stay in force.
 */

import { type ChatMessage, type Prompt, promptText } from './prompt.js'
import {
  chatAudioPart,
  chatImagePart,
  messagesImagePart,
  type PromptAudio,
  type PromptImage,
  responsesImagePart,
} from './prompt-images.js'
import { chatStructuredFields, type StructuredOutput } from './structured-parts.js'

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
  /** Images sent with the prompt, in the last user turn after its text; none when absent. */
  images?: readonly PromptImage[]
  /** Audio clips (chat only), after the images; none when absent. */
  audio?: readonly PromptAudio[]
  /** The answer's schema and the functions offered (chat only); none when absent. */
  structured?: StructuredOutput
}

type ImagePart = (image: PromptImage) => Record<string, unknown>

/**
 * The prompt as messages, the last user turn's content made a list of parts (its text, then the
 * images in the protocol's own part shape) when there are images; plain strings otherwise.
 */
function messagesWithImages(
  prompt: Prompt,
  images: readonly PromptImage[] | undefined,
  textType: string,
  imagePart: ImagePart,
  /** Parts of other media (chat's input_audio), after the images. */
  more: readonly Record<string, unknown>[] = [],
): readonly (ChatMessage | { role: string; content: unknown })[] {
  const messages: readonly ChatMessage[] =
    typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt
  if ((images === undefined || images.length === 0) && more.length === 0) return messages
  const last = messages.findLastIndex((message) => message.role === 'user')
  return messages.map((message, index) =>
    index === last
      ? {
          role: message.role,
          content: [{ type: textType, text: message.content }, ...(images ?? []).map(imagePart), ...more],
        }
      : message,
  )
}

/** Chat completions: the prompt as `messages`, then the structured output's fields (response_format, tools). */
export function chatBody(request: BodyRequest): Body {
  const body = openAiBody(request, {
    messages: messagesWithImages(
      request.prompt,
      request.images,
      'text',
      chatImagePart,
      (request.audio ?? []).map(chatAudioPart),
    ),
  })
  return request.structured === undefined ? body : { ...body, ...chatStructuredFields(request.structured) }
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
export function responsesBody({ model, prompt, maxTokens, stream, images }: BodyRequest): Body {
  const input =
    images === undefined || images.length === 0
      ? prompt
      : messagesWithImages(prompt, images, 'input_text', responsesImagePart)
  // Usage always comes on response.completed: there is no stream_options to ask for it.
  return { model, input, max_output_tokens: maxTokens, stream }
}

/**
 * Anthropic Messages: `messages` of user and assistant turns, `max_tokens` (required by the API),
 * and the system prompt lifted out of the messages into the top-level `system` the API wants.
 */
export function messagesBody({ model, prompt, maxTokens, stream, images }: BodyRequest): Body {
  const messages: readonly ChatMessage[] =
    typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content)
  const body: Body = { model, max_tokens: maxTokens }
  if (system.length > 0) body.system = system.join('\n\n')
  const turns = messages.filter((message) => message.role !== 'system')
  body.messages = messagesWithImages(turns, images, 'text', messagesImagePart)
  body.stream = stream
  return body
}

/** Embeddings: the prompt's text as `input`; no output length, never streamed. */
export function embeddingsBody({ model, prompt }: BodyRequest): Body {
  return { model, input: promptText(prompt) }
}
