import type { Dispatcher } from 'undici'
import type { ProxyRoute } from '../proxy.js'
import type { StreamDispatcher } from '../stream-dispatcher.js'
import {
  type ConnectionOwner,
  H1Connection,
  type H1Request,
  type Origin,
  openSocket,
  type SocketOpener,
} from './connection.js'
import { PoolClosedError } from './errors.js'
import { bodyOf, RequestHeads } from './request-head.js'

/**
 * The h1 client's per-origin pool, sized like the undici Pool it replaces on the streaming path:
 * up to `connections` sockets, so every in-flight request of a level has its own connection and
 * none waits for one (a wait would count as server time). Idle connections are kept for
 * `keepAliveTimeout` (shorter when the server's `Keep-Alive: timeout=N` says so, less a second, so
 * the client lets go first); a request with `reset` says `connection: close` and its connection is
 * never reused; so is one whose response said `connection: close`, or was close-delimited. An idle
 * connection the server closed is dropped at its FIN.
 */

export interface H1PoolOptions {
  connections: number
  /** Idle keep-alive, ms. */
  keepAliveTimeout?: number
  /** TCP (and TLS) set-up, ms. */
  connectTimeout?: number
  /** How a connection's socket is opened; TCP or TLS by the origin's scheme when absent. */
  openSocket?: SocketOpener
  /** The proxy the origin's requests go through (client/proxy.ts's proxyFor); absent or null = direct. */
  proxy?: ProxyRoute | null
}

/** A request waiting for a connection (more in flight than `connections`). */

/** The server's keep-alive hint is cut by this much, so the client closes an idle connection first. */
const KEEP_ALIVE_MARGIN_MS = 1_000

export class H1Pool implements StreamDispatcher, ConnectionOwner {
  private readonly target: Origin
  private readonly heads: RequestHeads
  private readonly all = new Set<H1Connection>()
  /** Idle connections, the most recently used last (reused first: its socket is the warmest). */
  private readonly idle: H1Connection[] = []
  private readonly queue: H1Request[] = []
  private readonly connections: number
  private readonly keepAliveTimeout: number
  private readonly connectTimeout: number
  private readonly openSocket: SocketOpener
  private readonly proxy: ProxyRoute | null
  private closedPool = false

  constructor(
    readonly origin: string,
    options: H1PoolOptions,
  ) {
    const url = new URL(origin)
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`the h1 client speaks http and https, not ${url.protocol}`)
    const tls = url.protocol === 'https:'
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const proxy = options.proxy ?? null
    this.proxy = proxy
    // http through a proxy: connections go to the proxy, requests name the server (absolute form);
    // https: connections tunnel through it to the server (connection.ts).
    const forward = proxy !== null && !tls ? proxy : null
    this.target =
      forward === null ? { host, port, tls, proxy } : { host: forward.host, port: forward.port, tls, proxy }
    this.heads = new RequestHeads(url.host, forward === null ? null : { origin: url.origin, proxy: forward })
    this.connections = Math.max(1, options.connections)
    this.keepAliveTimeout = options.keepAliveTimeout ?? 30_000
    this.connectTimeout = options.connectTimeout ?? 10_000
    this.openSocket = options.openSocket ?? openSocket
  }

  /** Sends a request; its handler hears everything. Throws only for a request it cannot write. */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.closedPool) throw new PoolClosedError()
    const body = bodyOf(options.body)
    const closing = options.reset === true
    // Built now, so a bad header fails this call (the caller records it), not a later write.
    const head = this.heads.build(options, body === null ? null : body.length, closing)
    const request: H1Request = { head, body, closing, headRequest: options.method === 'HEAD', handler }
    const connection = this.takeIdle()
    if (connection !== undefined) {
      this.claim(connection)
      connection.send(request)
    } else if (this.all.size < this.connections) {
      this.open().send(request)
    } else {
      this.queue.push(request)
    }
    return true
  }

  /** Connections open (busy, idle or connecting). */
  get openConnections(): number {
    return this.all.size
  }

  /** A pool of one new connection with the same settings: a resend must not meet another stale socket. */
  oneOff(): H1Pool {
    return new H1Pool(this.origin, {
      connections: 1,
      keepAliveTimeout: this.keepAliveTimeout,
      connectTimeout: this.connectTimeout,
      openSocket: this.openSocket,
      proxy: this.proxy,
    })
  }

  /** Closes every connection; requests in flight or waiting fail. */
  destroy(): Promise<void> {
    this.closedPool = true
    const error = new PoolClosedError()
    for (const queued of this.queue.splice(0)) queued.handler.onResponseError?.(UNSENT, error)
    for (const connection of [...this.all]) {
      // Its idle timer too: the connection's 'close' comes after the pool has forgotten it.
      this.claim(connection)
      connection.destroy(error)
    }
    this.all.clear()
    this.idle.length = 0
    return Promise.resolve()
  }

  released(connection: H1Connection, reusable: boolean): void {
    if (!reusable || this.closedPool) {
      this.drop(connection)
      connection.socket.destroy()
      this.next()
      return
    }
    const queued = this.queue.shift()
    if (queued !== undefined) {
      connection.send(queued)
      return
    }
    this.idle.push(connection)
    const hint = connection.keepAliveHintMs
    const idleMs =
      hint === null
        ? this.keepAliveTimeout
        : Math.min(this.keepAliveTimeout, Math.max(hint - KEEP_ALIVE_MARGIN_MS, 0))
    connection.idleTimer = setTimeout(() => connection.socket.destroy(), idleMs)
    connection.idleTimer.unref()
  }

  closed(connection: H1Connection): void {
    if (!this.all.has(connection)) return
    this.drop(connection)
    this.next()
  }

  private open(): H1Connection {
    const connection = new H1Connection(this.target, this, this.connectTimeout, this.openSocket)
    this.all.add(connection)
    return connection
  }

  /** The most recently used idle connection that can still carry a request; dead ones are dropped. */
  private takeIdle(): H1Connection | undefined {
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      if (connection.reusable) return connection
      this.drop(connection)
    }
    return undefined
  }

  private claim(connection: H1Connection): void {
    if (connection.idleTimer !== null) clearTimeout(connection.idleTimer)
    connection.idleTimer = null
  }

  private drop(connection: H1Connection): void {
    this.claim(connection)
    this.all.delete(connection)
    const at = this.idle.indexOf(connection)
    if (at >= 0) this.idle.splice(at, 1)
  }

  /** A connection slot came free: the oldest waiting request gets a new connection. */
  private next(): void {
    if (this.closedPool || this.queue.length === 0) return
    const connection = this.takeIdle() ?? (this.all.size < this.connections ? this.open() : null)
    const queued = connection === null ? undefined : this.queue.shift()
    if (connection !== null && queued !== undefined) {
      this.claim(connection)
      connection.send(queued)
    }
  }
}

/** A waiting request has no connection yet: a controller that can only say it was not aborted. */
const UNSENT: Dispatcher.DispatchController = Object.freeze({
  aborted: false,
  paused: false,
  reason: null,
  abort() {},
  pause() {},
  resume() {},
})
