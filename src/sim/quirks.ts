import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { ToolCallQuirk } from './tool-calls.js'

/**
 * Misbehaviours of real servers the simulator can reproduce, so the client's handling of them is
 * tested without the servers themselves. All off by default.
 */
export interface SimQuirks {
  /**
   * llama.cpp's llama-server: say `Keep-Alive: timeout=5, max=100`, then close the connection
   * CLOSE_AFTER_RESPONSE_MS after each streamed response. A request that arrives on the
   * connection meanwhile is dropped unanswered (and not counted), as llama-server drops it.
   */
  close_after_response?: boolean
  /** Streamed responses: this many more token events after `data: [DONE]`, then the end. */
  events_after_done?: number
  /** Streamed responses: `data: [DONE]`, then the connection is held open (never ended). */
  hold_after_done?: boolean
  /** usage.completion_tokens reported whatever was generated (e.g. -5 or 1e15). */
  usage_completion_tokens?: number
  /** Tokens per streamed event (speculative decoding, batching proxies); default 1. */
  tokens_per_event?: number
  /**
   * A leaking server: a client that closes its connection mid-stream does not free the request's
   * slot; the engine decodes on to max_tokens, writing to no one, as a server that never looks at
   * the connection does. The slot shows in num_requests_running until then.
   */
  ignore_disconnect?: boolean
  /**
   * A chat request that forces a tool call (tool-calls.ts) is answered in text anyway (`absent`), or
   * with a call that has no id, no name and arguments that are not JSON (`malformed`).
   */
  tool_calls?: ToolCallQuirk
}

/** llama-server closes ~1 ms after the last byte: enough for a keep-alive client to send into it. */
export const CLOSE_AFTER_RESPONSE_MS = 1

/** Connections a close-after-response server is closing: requests on them are dropped. */
const closing = new WeakSet<Socket>()

export function checkQuirks(quirks: SimQuirks): SimQuirks {
  const { events_after_done = 0, tokens_per_event = 1, usage_completion_tokens = 0 } = quirks
  if (!(Number.isInteger(events_after_done) && events_after_done >= 0))
    throw new RangeError(`events_after_done must be a non-negative integer, got ${events_after_done}`)
  if (!(Number.isInteger(tokens_per_event) && tokens_per_event >= 1))
    throw new RangeError(`tokens_per_event must be an integer >= 1, got ${tokens_per_event}`)
  if (!Number.isFinite(usage_completion_tokens))
    throw new RangeError(`usage_completion_tokens must be a finite number, got ${usage_completion_tokens}`)
  return quirks
}

/** True when the request came in on a connection being closed: it is dropped, never answered. */
export function droppedOnClosing(req: IncomingMessage): boolean {
  if (!closing.has(req.socket)) return false
  req.socket.destroy()
  return true
}

/** The keep-alive headers a closing server still sends. */
export const KEEP_ALIVE_HEADERS = { connection: 'keep-alive', 'keep-alive': 'timeout=5, max=100' }

/** Close `res`'s connection shortly after the response's last byte, whatever the headers said. */
export function closeAfterResponse(res: ServerResponse): void {
  const socket = res.socket
  if (socket === null) return
  res.once('finish', () => {
    closing.add(socket)
    setTimeout(() => socket.destroy(), CLOSE_AFTER_RESPONSE_MS)
  })
}
