/**
 * The wire protocols llmbench speaks, and which one an endpoint path means. A unified API channel
 * serves several behind one base URL: the request body, the stream's events, the key's header and
 * the figures that make sense all follow from the protocol.
 */

export const PROTOCOLS = ['chat', 'completions', 'responses', 'messages', 'embeddings'] as const
export type Protocol = (typeof PROTOCOLS)[number]

/** The path each protocol is served at, joined to the base URL without doubling /v1. */
export const PROTOCOL_ENDPOINTS: Readonly<Record<Protocol, string>> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  embeddings: '/v1/embeddings',
}

/**
 * The protocol an endpoint path names by its last segments (query ignored); chat completions when
 * the path names none of them, as every OpenAI-compatible server serves that.
 */
export function protocolOfEndpoint(endpoint: string): Protocol {
  const path = endpoint.split('?')[0]?.replace(/\/+$/, '') ?? ''
  if (/\/chat\/completions$/.test(path)) return 'chat'
  if (/\/completions$/.test(path)) return 'completions'
  if (/\/responses$/.test(path)) return 'responses'
  if (/\/messages$/.test(path)) return 'messages'
  if (/\/embeddings$/.test(path)) return 'embeddings'
  return 'chat'
}

/** Whether responses of this protocol stream tokens (embeddings answer with one body). */
export function protocolStreams(protocol: Protocol): boolean {
  return protocol !== 'embeddings'
}
