/**
 * One descriptor per wire protocol: everything that differs between them, in one place. The rest
 * of llmbench asks the descriptor (`protocolOf(protocol).generatesTokens`) rather than comparing
 * protocol names, so a protocol is added here and nowhere else.
 */

import type { ProtocolCarries } from './capabilities.js'
import { PROTOCOLS, type Protocol } from './names.js'
import {
  type BodyRequest,
  chatBody,
  completionsBody,
  embeddingsBody,
  messagesBody,
  responsesBody,
} from './protocol-bodies.js'
import {
  chatInterpreter,
  embeddingsInterpreter,
  messagesInterpreter,
  type ProtocolInterpreter,
  responsesInterpreter,
} from './protocol-interpreter.js'
import {
  CHAT_FIELDS,
  COMPLETIONS_FIELDS,
  EMBEDDINGS_FIELDS,
  MESSAGES_FIELDS,
  RESPONSES_FIELDS,
  type RequestFields,
} from './request-fields.js'

/** The version header Anthropic's Messages API requires; the one its documentation shows. */
export const ANTHROPIC_VERSION = '2023-06-01'

export interface WireProtocol {
  name: Protocol
  /** The path it is served at, joined to the base URL without doubling /v1. */
  path: string
  /** The JSON body of one request. */
  body(request: BodyRequest): Record<string, unknown>
  /** Where a server finds the prompt and the output length in such a body (the simulator reads it so). */
  request: RequestFields
  /**
   * Where `--auth auto` sends the key for this protocol (Anthropic's x-api-key for messages); null =
   * as the host wants it (Azure's api-key, else a bearer token: config/auth-mode.ts).
   */
  autoAuth: 'x-api-key' | null
  /** Headers every request of this protocol carries, whatever the auth (Anthropic's version). */
  headers: Readonly<Record<string, string>>
  /** A reader of one exchange's events and bodies. */
  interpreter(): ProtocolInterpreter
  /** Whether a response may be an event stream; embeddings answer with one body, whatever --no-stream says. */
  streams: boolean
  /**
   * Whether it generates tokens: output lengths, TTFT, TPOT and output throughput mean something.
   * Embeddings only read their input.
   */
  generatesTokens: boolean
  /** What a readable answer looks like, in words: said when a response could not be read. */
  format: string
  /** What its requests and answers can carry besides text (capabilities.ts). */
  carries: Readonly<ProtocolCarries>
}

const GENERATING = { autoAuth: null, headers: {}, streams: true, generatesTokens: true } as const

/** Text in, text out: what legacy completions and embeddings carry. */
const TEXT_ONLY: ProtocolCarries = {
  images: false,
  audio: false,
  tools: false,
  structuredOutput: false,
  reasoning: false,
  conversation: false,
}

const WIRE_PROTOCOLS: Readonly<Record<Protocol, WireProtocol>> = {
  chat: {
    ...GENERATING,
    name: 'chat',
    format: 'an OpenAI chat completions stream',
    path: '/v1/chat/completions',
    body: chatBody,
    request: CHAT_FIELDS,
    interpreter: chatInterpreter,
    carries: {
      images: true,
      audio: true,
      tools: true,
      structuredOutput: true,
      reasoning: true,
      conversation: true,
    },
  },
  completions: {
    ...GENERATING,
    name: 'completions',
    format: 'an OpenAI completions stream',
    path: '/v1/completions',
    body: completionsBody,
    request: COMPLETIONS_FIELDS,
    interpreter: chatInterpreter,
    carries: TEXT_ONLY,
  },
  responses: {
    ...GENERATING,
    name: 'responses',
    format: 'an OpenAI Responses API stream',
    path: '/v1/responses',
    body: responsesBody,
    request: RESPONSES_FIELDS,
    interpreter: responsesInterpreter,
    // llmbench sends no tools or text.format to the Responses API (yet): the body builder has no such fields.
    carries: { ...TEXT_ONLY, images: true, reasoning: true, conversation: true },
  },
  messages: {
    ...GENERATING,
    name: 'messages',
    format: 'an Anthropic Messages stream',
    path: '/v1/messages',
    body: messagesBody,
    request: MESSAGES_FIELDS,
    autoAuth: 'x-api-key',
    headers: { 'anthropic-version': ANTHROPIC_VERSION },
    interpreter: messagesInterpreter,
    carries: { ...TEXT_ONLY, images: true, reasoning: true, conversation: true },
  },
  embeddings: {
    name: 'embeddings',
    format: 'an OpenAI embeddings body',
    path: '/v1/embeddings',
    body: embeddingsBody,
    request: EMBEDDINGS_FIELDS,
    autoAuth: null,
    headers: {},
    interpreter: embeddingsInterpreter,
    streams: false,
    generatesTokens: false,
    carries: TEXT_ONLY,
  },
}

/** The descriptor of `protocol`; chat completions when absent (targets and results from before protocols). */
export function protocolOf(protocol: Protocol | undefined): WireProtocol {
  return WIRE_PROTOCOLS[protocol ?? 'chat']
}

/** The protocol served at exactly `path` (a server's route, '/v1/messages'), or null. */
export function protocolServedAt(path: string | undefined): Protocol | null {
  return PROTOCOLS.find((protocol) => WIRE_PROTOCOLS[protocol].path === path) ?? null
}
