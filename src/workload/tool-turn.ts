import type { ChatMessage, ChatToolCall } from '../protocols/prompt.js'
import type { RequestRecord } from '../records/types.js'

/**
 * A turn's reply as an agent keeps it in its history, and what the agent sends after it (--tools with
 * sessions or jobs). A reply that called tools goes in as the assistant message with its `tool_calls`
 * (ids, names and arguments as the server streamed them, joined), and the next turn's input then
 * comes back as the tools' results: one `role: "tool"` message per call, answering it by id, each
 * carrying the next turn's input delta (the synthetic tool output, so the workload's delta sizes
 * still say how much the prompt grows), with no user message. A reply in text goes in as text and the
 * next input as a user message, as in any session. A call the engine left in the answer's text (a
 * `{"tool_call": ...}` it did not parse) is text to an API client, so it goes back as text.
 */
export interface TurnReply {
  /** The answer without the model's reasoning (and without the calls' own text). */
  text: string
  /** The calls the answer made; empty when it answered in text. */
  calls: readonly ChatToolCall[]
}

/**
 * The reply of `record` as the history keeps it. `callIdPrefix` names the calls the server sent
 * without an id (unique within the conversation, so each result still answers its own call).
 */
export function turnReply(record: RequestRecord, callIdPrefix: string): TurnReply {
  const parts = record.tool_call_parts ?? []
  if (parts.length === 0) return { text: withoutReasoning(record, record.output_text ?? ''), calls: [] }
  return {
    text: withoutReasoning(record, record.tool_call_content ?? ''),
    calls: parts.map((part, i) => ({
      id: part.id ?? `${callIdPrefix}_${i}`,
      type: 'function',
      function: { name: part.name, arguments: part.arguments },
    })),
  }
}

/** A failed turn's reply: nothing said, nothing called. */
export const NO_REPLY: TurnReply = { text: '', calls: [] }

/**
 * The reply as the assistant message of the history. A call without a name or with arguments that
 * are not JSON goes back as the server sent it (the record's tool_check says what was wrong): the
 * server then answers for its own output.
 */
export function assistantMessage(reply: TurnReply): ChatMessage {
  return reply.calls.length === 0
    ? { role: 'assistant', content: reply.text }
    : { role: 'assistant', content: reply.text, tool_calls: reply.calls }
}

/**
 * The messages that carry a turn's `input` after `previous` (the reply just before it in the history,
 * null at the start): the tools' results when that reply called tools, else one user message.
 */
export function inputMessages(previous: TurnReply | null, input: string): ChatMessage[] {
  if (previous === null || previous.calls.length === 0) return [{ role: 'user', content: input }]
  return previous.calls.map((call) => ({ role: 'tool', tool_call_id: call.id, content: input }))
}

/** The answer without the reasoning streamed before it (clients drop it and servers are not asked to see it again). */
function withoutReasoning(record: RequestRecord, text: string): string {
  const reasoning = record.reasoning_text
  return reasoning !== undefined && text.startsWith(reasoning) ? text.slice(reasoning.length) : text
}
