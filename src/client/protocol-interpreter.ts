/**
 * How the stream client reads a response of each protocol: one SSE event, or one whole JSON body
 * (a non-streamed request, or a server that ignored stream: true). Chosen once per exchange; a chat
 * exchange gets its own reader, which learns the shape of its stream's token chunks (chunk-shape.ts).
 */

import type { Protocol } from '../protocol.js'
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

const CHAT: ProtocolInterpreter = {
  event: (_name, data) => interpretChunk(data),
  body: interpretObject,
  end: '[DONE] or a finish_reason',
}

const INTERPRETERS: Readonly<Record<Protocol, ProtocolInterpreter>> = {
  chat: CHAT,
  completions: CHAT,
  responses: {
    event: interpretResponsesEvent,
    body: interpretResponsesBody,
    end: 'response.completed or response.incomplete',
  },
  messages: {
    event: interpretMessagesEvent,
    body: interpretMessagesBody,
    end: 'message_stop or a stop_reason',
  },
  // Never streamed; a server that streams anyway is read as chat chunks.
  embeddings: { event: CHAT.event, body: interpretEmbeddingsBody, end: CHAT.end },
}

/** The interpreter of `protocol` for one exchange; chat completions when absent (targets built before protocols). */
export function interpreterOf(protocol: Protocol | undefined): ProtocolInterpreter {
  const shared = INTERPRETERS[protocol ?? 'chat']
  if (shared !== CHAT) return shared
  const reader = new ChatChunkReader()
  return { event: (_name, data) => reader.read(data), body: CHAT.body, end: CHAT.end }
}
