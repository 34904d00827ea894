/** Builds the JSON request body, serialized once per prompt and reused as bytes. */

export interface BodyOptions {
  model: string
  endpoint: string
  stream: boolean
  maxTokens: number
}

/** `/v1/completions` takes a prompt; every other endpoint is treated as chat completions. */
export function isLegacyCompletions(endpoint: string): boolean {
  return /\/completions$/.test(endpoint) && !/\/chat\/completions$/.test(endpoint)
}

export function buildBody(options: BodyOptions, promptText: string): Buffer {
  const body: Record<string, unknown> = { model: options.model }
  if (isLegacyCompletions(options.endpoint)) body.prompt = promptText
  else body.messages = [{ role: 'user', content: promptText }]
  body.max_tokens = options.maxTokens
  body.stream = options.stream
  // Ask for usage on the stream: token counts then come from the server, not our tokenizer.
  if (options.stream) body.stream_options = { include_usage: true }
  return Buffer.from(JSON.stringify(body))
}
