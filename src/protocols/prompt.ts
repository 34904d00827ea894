/**
 * What a request asks about, whatever the protocol: one text, or a conversation. Each protocol's
 * body carries it in its own shape (protocol-bodies.ts).
 */

export interface ChatMessage {
  /** `tool`: a tool's result, answering one call of the assistant turn before it (chat only). */
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  /** An assistant turn that called tools: the calls as the server returned them (chat only). */
  tool_calls?: readonly ChatToolCall[]
  /** A tool message: the id of the call it answers. */
  tool_call_id?: string
}

/** One tool call in an assistant turn, in chat completions' shape (`arguments` is the JSON text as streamed). */
export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** A prompt as text (one user message) or as a conversation (a dataset entry). */
export type Prompt = string | readonly ChatMessage[]

/** The text of a prompt for /v1/completions and embeddings: a conversation's contents, one per line. */
export function promptText(prompt: Prompt): string {
  return typeof prompt === 'string' ? prompt : prompt.map((message) => message.content).join('\n')
}
