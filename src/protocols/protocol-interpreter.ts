/**
 * How the stream client reads a response of each protocol: one SSE event, or one whole JSON body
 * (a non-streamed request, or a server that ignored stream: true). Made once per exchange; a chat
 * exchange gets its own reader, which learns the shape of its stream's token chunks (chunk-shape.ts).
 */

import { type ChunkInfo, interpretChunk, interpretObject } from './chunk.js'
import { ChatChunkReader } from './chunk-shape.js'
import { interpretEmbeddingsBody } from './embeddings-body.js'
import { interpretMessagesBody, interpretMessagesEvent } from './messages-events.js'
import { interpretResponsesBody, interpretResponsesEvent } from './responses-events.js'

export interface ProtocolInterpreter {
  /** One SSE event: its `event:` name ('' when absent) and its data. */
  event(name: string, data: string): ChunkInfo
  body(obj: Record<string, unknown>): ChunkInfo
  /** What ends a stream of this protocol, named when a stream ends without it. */
  end: string
}

const CHAT_END = '[DONE] or a finish_reason'

/** Chat and legacy completions chunks, each exchange with a reader of its own (it learns its stream's chunk shape). */
export function chatInterpreter(): ProtocolInterpreter {
  const reader = new ChatChunkReader()
  return { event: (_name, data) => reader.read(data), body: interpretObject, end: CHAT_END }
}

const RESPONSES: ProtocolInterpreter = {
  event: interpretResponsesEvent,
  body: interpretResponsesBody,
  end: 'response.completed or response.incomplete',
}

const MESSAGES: ProtocolInterpreter = {
  event: interpretMessagesEvent,
  body: interpretMessagesBody,
  end: 'message_stop or a stop_reason',
}

// Never streamed; a server that streams anyway is read as chat chunks.
const EMBEDDINGS: ProtocolInterpreter = {
  event: (_name, data) => interpretChunk(data),
  body: interpretEmbeddingsBody,
  end: CHAT_END,
}

/** These protocols' readers keep nothing between exchanges: one serves them all. */
export const responsesInterpreter = (): ProtocolInterpreter => RESPONSES
export const messagesInterpreter = (): ProtocolInterpreter => MESSAGES
export const embeddingsInterpreter = (): ProtocolInterpreter => EMBEDDINGS
