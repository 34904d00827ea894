import { type Protocol, protocolOfEndpoint } from '../protocols/names.js'
import type { Prompt } from '../protocols/prompt.js'
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
}

export function buildBody(options: BodyOptions, prompt: Prompt, maxTokens: number): Buffer {
  const { model, stream } = options
  const protocol = protocolOf(options.protocol ?? protocolOfEndpoint(options.endpoint))
  const body = protocol.body({ model, prompt, maxTokens, stream, ignoreEos: options.ignoreEos === true })
  return Buffer.from(JSON.stringify(body))
}
