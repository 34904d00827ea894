import { type Capability, carriersInWords } from '../protocols/capabilities.js'
import { type Protocol, protocolOfEndpoint } from '../protocols/names.js'
import type { Prompt } from '../protocols/prompt.js'
import type { PromptAudio, PromptImage } from '../protocols/prompt-images.js'
import type { StructuredOutput } from '../protocols/structured-parts.js'
import { protocolOf } from '../protocols/wire-protocol.js'

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
  /** The answer's schema and the functions offered (--response-schema, --tools), in every body. */
  structured?: StructuredOutput
}

/**
 * `images`, encoded once when the workload is planned, go in the last user turn after its text; a
 * protocol without image (or audio) parts, or without a field for the structured output's schema or
 * tools, is refused rather than sent the rest alone.
 */
export function buildBody(
  options: BodyOptions,
  prompt: Prompt,
  maxTokens: number,
  images: readonly PromptImage[] = [],
  audio: readonly PromptAudio[] = [],
): Buffer {
  const { model, stream, structured } = options
  const name = options.protocol ?? protocolOfEndpoint(options.endpoint)
  const protocol = protocolOf(name)
  const { carries } = protocol
  // Refused unless the protocol's descriptor carries what is sent.
  const needs = (capability: Capability, what: string, send: string): void => {
    if (!carries[capability])
      throw new Error(`the ${name} protocol has no ${what}: send ${send} to ${carriersInWords(capability)}`)
  }
  if (images.length > 0) needs('images', 'image parts', 'images')
  if (audio.length > 0) needs('audio', 'audio parts', 'audio')
  if ((structured?.schema ?? null) !== null) needs('structuredOutput', 'response format', 'a response schema')
  if ((structured?.tools ?? null) !== null) needs('tools', 'tools', 'tools')
  const ignoreEos = options.ignoreEos === true
  return Buffer.from(
    JSON.stringify(protocol.body({ model, prompt, maxTokens, stream, ignoreEos, images, audio, structured })),
  )
}
