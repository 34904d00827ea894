/**
 * The wire protocols llmbench speaks, and which one an endpoint path means. A unified API channel
 * serves several behind one base URL: the request body, the stream's events, the key's header and
 * the figures that make sense all follow from the protocol (wire-protocol.ts says how).
 */

export const PROTOCOLS = ['chat', 'completions', 'responses', 'messages', 'embeddings'] as const
export type Protocol = (typeof PROTOCOLS)[number]

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
