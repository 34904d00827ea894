import { carriersInWords } from '../protocols/capabilities.js'
import { type Protocol, protocolOfEndpoint } from '../protocols/names.js'
import type { Prompt } from '../protocols/prompt.js'
import type { PromptAudio, PromptImage } from '../protocols/prompt-images.js'
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
  /** Fields added to every body as they are (--response-schema's response_format, --tools' tools). */
  extra?: Record<string, unknown>
}

/**
 * `images`, encoded once when the workload is planned, go in the last user turn after its text; a
 * protocol without image (or audio) parts is refused rather than sent the text alone.
 */
export function buildBody(
  options: BodyOptions,
  prompt: Prompt,
  maxTokens: number,
  images: readonly PromptImage[] = [],
  audio: readonly PromptAudio[] = [],
): Buffer {
  const { model, stream } = options
  const name = options.protocol ?? protocolOfEndpoint(options.endpoint)
  const protocol = protocolOf(name)
  const { carries } = protocol
  if (images.length > 0 && !carries.images) {
    throw new Error(`the ${name} protocol has no image parts: send images to ${carriersInWords('images')}`)
  }
  if (audio.length > 0 && !carries.audio) {
    throw new Error(`the ${name} protocol has no audio parts: send audio to ${carriersInWords('audio')}`)
  }
  const ignoreEos = options.ignoreEos === true
  const body = protocol.body({ model, prompt, maxTokens, stream, ignoreEos, images, audio })
  return Buffer.from(JSON.stringify(options.extra === undefined ? body : { ...body, ...options.extra }))
}
