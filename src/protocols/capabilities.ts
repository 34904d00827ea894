/**
 * What a protocol's requests and answers can carry, as its descriptor says (wire-protocol.ts). The
 * rest of llmbench asks by capability (`protocolOf(protocol).carries.images`), never by a protocol's
 * name, and words its refusals from the same table, so a new protocol or a new part of one is one
 * entry there and the checks, the messages and the simulator follow.
 */

import { PROTOCOLS, type Protocol } from './names.js'
import { protocolOf } from './wire-protocol.js'

/** What llmbench sends and reads in the protocol's own shape: a body builder's fields, not all the API has. */
export interface ProtocolCarries {
  /** Image parts in a user turn (--images, a dataset row's images). */
  images: boolean
  /** Audio parts in a user turn (--audio's input_audio). */
  audio: boolean
  /** Functions offered to the model in the body, and its calls of them back (--tools). */
  tools: boolean
  /** A response format asking for JSON that matches a schema (--response-schema). */
  structuredOutput: boolean
  /**
   * Reasoning tokens in a field or event of their own, apart from the answer's text (chat's
   * reasoning_content, Responses' reasoning summary, Messages' thinking blocks).
   */
  reasoning: boolean
  /**
   * The prompt as a conversation of role/content turns, so the model's reply is the next turn of it
   * (a server's prefix cache then holds the reply too); legacy completions send one text.
   */
  conversation: boolean
}

export type Capability = keyof ProtocolCarries

/** The protocols that carry `capability`, in PROTOCOLS' order. */
export function protocolsCarrying(capability: Capability): Protocol[] {
  return PROTOCOLS.filter((protocol) => protocolOf(protocol).carries[capability])
}

/** Names as a reader says them: "chat", "chat or responses", "chat, responses or messages". */
export function eitherOf(names: readonly string[]): string {
  if (names.length <= 1) return names.join('')
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`
}

/** The protocols that carry `capability`, as a refusal names them: "chat", "chat, responses or messages". */
export function carriersInWords(capability: Capability): string {
  return eitherOf(protocolsCarrying(capability))
}

/** "the chat protocol", "the chat, responses or messages protocol": those that carry `capability`. */
export function theProtocolsCarrying(capability: Capability): string {
  return `the ${carriersInWords(capability)} protocol`
}
