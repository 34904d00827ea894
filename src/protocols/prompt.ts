/**
 * What a request asks about, whatever the protocol: one text, or a conversation. Each protocol's
 * body carries it in its own shape (protocol-bodies.ts).
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** A prompt as text (one user message) or as a conversation (a dataset entry). */
export type Prompt = string | readonly ChatMessage[]

/** The text of a prompt for /v1/completions and embeddings: a conversation's contents, one per line. */
export function promptText(prompt: Prompt): string {
  return typeof prompt === 'string' ? prompt : prompt.map((message) => message.content).join('\n')
}
