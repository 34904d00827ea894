import { subscribe } from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'

/**
 * Which connection each request went out on, and whether the server closes connections behind
 * the client's back.
 *
 * Some servers (llama.cpp's llama-server) close the connection right after every streamed
 * response while their headers say `Keep-Alive: timeout=5, max=100`. A closed loop sends its next
 * request at once on that socket; the server's FIN crosses it and the request fails with "other
 * side closed" without ever reaching the server. This module notices such closes so that the
 * client stops reusing connections (undici's `reset: true`) and the level can say so.
 *
 * How a request learns its socket: the h1 client (client/h1/) calls the handler's onSocket
 * directly. undici publishes 'undici:client:sendHeaders' ({request,
 * headers, socket}) synchronously right after it calls the handler's onRequestStart (writeH1 in
 * undici/lib/dispatcher/client-h1.js), so the handler that just started is the one the socket
 * belongs to. A WeakMap from socket to its state tells a socket's first request from later ones
 * without touching undici's internals, and costs nothing once a socket is gone.
 */

/** A close later than this after a response is an idle timeout, not a close after the response. */
export const PROMPT_CLOSE_MS = 1_000

/** What a connection's requests tell it; one per socket. */
interface SocketState {
  watch: ConnectionWatch
  /** Requests written on it so far. */
  requests: number
  /** A request is in flight on it. */
  busy: boolean
  /** When the request in flight (or the last one) was written on it. */
  claimedAt: number
  /** The request in flight has had its response headers (a close now is a drop, not a race). */
  answered: boolean
  /** When its last response ended normally (performance.now()); null before any. */
  lastResponseEndAt: number | null
  /** Someone said this connection ends: the server's `connection: close`, or our own `reset`. */
  announcedClose: boolean
  /** Its close by the server was counted (the FIN and a request dying on it are one close). */
  closeCounted: boolean
}

/** The side of a request that needs its socket: the Exchange of stream-client.ts. */
export interface SocketUser {
  onSocket(socket: Socket): void
}

const sockets = new WeakMap<Socket, SocketState>()
/** The handler whose onRequestStart ran last and has not been told its socket yet. */
let awaiting: SocketUser | null = null
let subscribed = false

function subscribeOnce(): void {
  if (subscribed) return
  subscribed = true
  subscribe('undici:client:sendHeaders', (message) => {
    const user = awaiting
    awaiting = null
    user?.onSocket((message as { socket: Socket }).socket)
  })
}

/** Call from onRequestStart: the next sendHeaders message names this request's socket. */
export function awaitSocket(user: SocketUser): void {
  awaiting = user
}

/**
 * Call from onSocket: the socket is known. A dispatcher that names it directly (the h1 client)
 * publishes no sendHeaders message, so the wait set by awaitSocket ends here; else an undici
 * request of another kind (the model list) would be taken for this one's.
 */
export function socketNamed(user: SocketUser): void {
  if (awaiting === user) awaiting = null
}

function onServerEnd(this: Socket): void {
  const state = sockets.get(this)
  if (state === undefined || state.announcedClose || state.lastResponseEndAt === null) return
  // Busy and answered: the server dropped a response midway, a failure of its own. Busy and
  // unanswered: a request written after the last response crossed the server's FIN (the race
  // itself). Idle: a close after the last response. Either is a habit only when it came right after
  // that response; later, it is an idle timeout.
  if (state.busy && state.answered) return
  const at = state.busy ? state.claimedAt : performance.now()
  if (at - state.lastResponseEndAt <= PROMPT_CLOSE_MS) noteServerClose(state)
}

/** The server closed this connection right after a response: counted once per connection. */
function noteServerClose(state: SocketState): void {
  if (state.closeCounted) return
  state.closeCounted = true
  state.watch.serverClosed()
}

/**
 * A request written on this reused connection died before any byte of its response. When the
 * connection's last response had ended just before, the server closed it after that response (an
 * RST shows no 'end' to watch). Longer ago, it is an idle timeout of the server's, not a habit: the
 * request is resent all the same, but keep-alive stays on.
 */
export function diedUnanswered(state: SocketState): void {
  if (state.announcedClose || state.lastResponseEndAt === null) return
  if (state.claimedAt - state.lastResponseEndAt <= PROMPT_CLOSE_MS) noteServerClose(state)
}

/** Connection counters of one round (warm-up or a measured level) on one thread. */
export interface ConnectionCounts {
  /** Connections the server closed right after a response without saying `connection: close`. */
  closed_by_server: number
  /** Whether the thread still reuses connections at the round's end. */
  keepalive: boolean
}

/**
 * The keep-alive policy of one thread and what its sockets did. Shared by every target of the
 * thread, so a server's habit noticed in one level holds for the next.
 */
export class ConnectionWatch {
  /** False: every request asks for `connection: close` and gets a connection of its own. */
  keepAlive: boolean
  private closedByServer = 0
  private waiters: (() => void)[] = []

  constructor(keepAlive: boolean) {
    this.keepAlive = keepAlive
    subscribeOnce()
  }

  /** The state of `socket`, created (and watched for the server's close) on its first request. */
  track(socket: Socket, reset: boolean): SocketState {
    let state = sockets.get(socket)
    if (state === undefined) {
      state = {
        watch: this,
        requests: 0,
        busy: false,
        claimedAt: 0,
        answered: false,
        lastResponseEndAt: null,
        announcedClose: false,
        closeCounted: false,
      }
      sockets.set(socket, state)
      // First among the socket's 'end' listeners: the h1 client's own fails the request in flight
      // at once, and the state must still show it busy and answered (a response cut midway).
      socket.prependOnceListener('end', onServerEnd)
    }
    if (reset) state.announcedClose = true
    return state
  }

  /** A server closed a connection right after a response: stop reusing connections. */
  serverClosed(): void {
    this.closedByServer++
    this.keepAlive = false
    for (const wake of this.waiters.splice(0)) wake()
  }

  /**
   * Resolves when a server close is seen or after `ms`, whichever is first: a probe that just got
   * its response waits this long for a close that llama.cpp sends ~1 ms after the last byte.
   */
  closeSeenWithin(ms: number): Promise<boolean> {
    if (!this.keepAlive) return Promise.resolve(true)
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake)
        resolve(false)
      }, ms)
      this.waiters.push(wake)
    })
  }

  /** The counts since the last call, which starts the next round's. */
  take(): ConnectionCounts {
    const counts = { closed_by_server: this.closedByServer, keepalive: this.keepAlive }
    this.closedByServer = 0
    return counts
  }
}

/** The request on `state`'s socket ended; `normally`: its whole response arrived. */
export function releaseSocket(state: SocketState, at: number, normally: boolean): void {
  state.busy = false
  if (normally) state.lastResponseEndAt = at
}

/** Marks a socket busy with one more request, written at `at`; returns whether it had carried one before. */
export function claimSocket(state: SocketState, at: number): boolean {
  state.busy = true
  state.claimedAt = at
  state.answered = false
  return state.requests++ > 0
}

/** Response headers arrived; `closing`: the server announced the connection's end (`connection: close`). */
export function answered(state: SocketState, closing: boolean): void {
  state.answered = true
  if (closing) state.announcedClose = true
}

export type { SocketState }
