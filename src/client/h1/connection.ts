import type { IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Dispatcher } from 'undici'
import type { ProxyRoute } from '../proxy.js'
import { ConnectTimeoutError, ProxyConnectError, SocketClosedError } from './errors.js'
import { ResponseParser, type ResponseSink } from './response-parser.js'
import { connectTls } from './tls.js'
import { requestTunnel } from './tunnel.js'

/**
 * One connection of the h1 client: writes a request, feeds each read to the response parser and
 * hands the response to the request's handler with undici's DispatchHandler callbacks (so the
 * Exchange of stream-client.ts drives either client), then says whether it can carry another.
 *
 * The connection is the handler's DispatchController too (abort, pause, resume), and `readAt` is
 * the arrival of the read being handed on: the first statement of the read callback takes it, so
 * no parsing runs before the stamp.
 */

/** Where a connection goes. */
export interface Origin {
  /** Host name or IP address to connect to (no brackets). */
  host: string
  port: number
  tls: boolean
  /**
   * The proxy in between, when there is one: TCP goes to it. For TLS the connection asks it for a
   * tunnel to host:port (CONNECT) and shakes hands with the server through it; without TLS, host and
   * port are the proxy's own and the pool writes absolute-form requests (request-head.ts).
   */
  proxy?: ProxyRoute | null
}

/** Opens the socket of a connection (a test may hand in a stream that replays recorded reads). */
export type SocketOpener = (origin: Origin) => Socket

/** TCP, or TLS over it (client/h1/tls.ts). */
export const openSocket: SocketOpener = (origin) =>
  origin.tls ? connectTls(origin.host, origin.port) : connect(origin.port, origin.host)

/** The pool's side: told when a request on the connection is over, and when the socket is gone. */
export interface ConnectionOwner {
  /** The request is over; `reusable`: the connection may carry another. */
  released(connection: H1Connection, reusable: boolean): void
  /** The socket closed (idle or not); the connection is no longer the pool's. */
  closed(connection: H1Connection): void
}

/**
 * A handler that also wants the socket (the Exchange: connections.ts's bookkeeping) and, for the
 * first request on a connection, how long its TCP connect took.
 */
type Handler = Dispatcher.DispatchHandler & { onSocket?(socket: Socket, connectMs?: number): void }

/** One request as the pool built it: written by a connection now, or once one is free. */
export interface H1Request {
  head: string
  body: Buffer | null
  /** It asked for `connection: close`. */
  closing: boolean
  /** A HEAD: its response has no body, whatever its headers say. */
  headRequest: boolean
  handler: Handler
}

/** Request bodies larger than this are written piece by piece, each after the socket drained. */
const BODY_SLICE_BYTES = 64 * 1024

/**
 * Plain TCP connections read into this one buffer (node:net's `onread`): reads are handled one at a
 * time, synchronously, so the thread's connections can share it. Each read is then copied out into
 * a buffer of its own size (from Node's small-buffer pool), since the stream client keeps pieces of
 * reads (a line not yet ended, an error body). Measured against node:net's default (a fresh 64 KiB
 * allocation per read, shrunk to the bytes read): less CPU per read and a few KiB less peak RSS per
 * stream (docs/benchmarks.md).
 */
const SHARED_READ = Buffer.allocUnsafe(64 * 1024)

export class H1Connection implements ResponseSink {
  /** The connection's socket; through a proxy's tunnel, the TLS socket once the tunnel is up. */
  socket: Socket
  /** Arrival of the read being handed on (performance.now()). */
  readAt = 0
  private readonly parser = new ResponseParser(this)
  private handler: Handler | null = null
  private connected = false
  /**
   * The TCP handshake's duration (SYN to SYN-ACK: one network round trip, plus the kernel's accept),
   * from the name's resolution when there was one, so DNS is not counted; handed to the first
   * request written, then null. TLS's handshake is left out: it is more round trips and CPU.
   */
  private connectMs: number | null = null
  private connectStartedAt = performance.now()
  private connectTimer: NodeJS.Timeout | null = null
  /** The request written (or to write once connected): its head and body. */
  private head = ''
  private body: Buffer | null = null
  private bodyOffset = 0
  /** This request asked for `connection: close`. */
  private closing = false
  /** The socket is closed or being closed: never reused. */
  private dead = false
  /** Through a proxy's tunnel: the tunnel is up, its TLS socket is the connection's from now on. */
  private tunnelled = false
  /** The controller of the request in flight, handed to its handler's callbacks. */
  private control: RequestControl | null = null
  /** When the pool put it idle; the pool's idle timer. */
  idleTimer: NodeJS.Timeout | null = null
  /** The server's `Keep-Alive: timeout=N`, ms; null when it said none. */
  keepAliveHintMs: number | null = null

  constructor(
    private readonly origin: Origin,
    private readonly owner: ConnectionOwner,
    private readonly connectTimeoutMs: number,
    open: SocketOpener,
  ) {
    const tunnel = origin.tls && origin.proxy != null
    if (tunnel) {
      // Its reads are the CONNECT answer's (tunnel.ts) until the TLS socket over it takes them.
      const proxy = origin.proxy as ProxyRoute
      this.socket = connect(proxy.port, proxy.host)
    } else if (open === openSocket && !origin.tls) {
      this.socket = connect({
        port: origin.port,
        host: origin.host,
        onread: { buffer: SHARED_READ, callback: this.onReadInto },
      })
    } else {
      this.socket = open(origin)
      this.socket.on('data', this.onRead)
    }
    this.socket.setNoDelay(true)
    this.socket.setKeepAlive(true, 60_000)
    this.connectTimer = setTimeout(this.onConnectTimeout, connectTimeoutMs)
    this.socket.once('lookup', this.onLookup)
    this.socket.once('connect', this.onTcpConnect)
    if (tunnel) this.socket.once('connect', this.onProxyConnect)
    else this.socket.once(origin.tls ? 'secureConnect' : 'connect', this.onConnect)
    this.listen(this.socket)
  }

  private listen(socket: Socket): void {
    socket.on('end', this.onServerEnd)
    socket.on('error', this.onSocketError)
    socket.on('close', this.onSocketClose)
  }

  /** Connected to the proxy: ask it for the tunnel. */
  private readonly onProxyConnect = (): void => {
    requestTunnel(this.socket, this.origin, this.origin.proxy as ProxyRoute, this.onTunnel)
  }

  /** The tunnel is up (or refused): the TLS handshake with the server goes through it. */
  private readonly onTunnel = (error: Error | null): void => {
    if (error !== null) {
      this.destroy(error)
      return
    }
    const raw = this.socket
    this.tunnelled = true
    raw.removeListener('end', this.onServerEnd)
    raw.removeListener('error', this.onSocketError)
    raw.removeListener('close', this.onSocketClose)
    // The TLS socket reports what happens to the one under it; a late error there has nowhere to go.
    raw.on('error', () => {})
    this.socket = connectTls(this.origin.host, this.origin.port, raw)
    this.socket.on('data', this.onRead)
    this.socket.once('secureConnect', this.onConnect)
    this.listen(this.socket)
  }

  /** No request on it. */
  get idle(): boolean {
    return this.handler === null
  }

  get reusable(): boolean {
    return !this.dead
  }

  /** Sends one request on this connection (now, or once it is connected). */
  send(request: H1Request): void {
    this.handler = request.handler
    this.head = request.head
    this.body = request.body
    this.bodyOffset = 0
    this.closing = request.closing
    this.control = new RequestControl(this, request.handler)
    this.parser.reset(request.headRequest)
    if (this.connected) this.write()
  }

  /** Closes the socket; a request on it fails with `reason`. */
  destroy(reason: Error): void {
    this.fail(reason)
    this.dead = true
    this.socket.destroy()
  }

  /** Whether `handler`'s request is the one in flight here (see RequestControl). */
  carries(handler: Handler): boolean {
    return this.handler === handler
  }

  /** Aborts `handler`'s request, when it is still the one in flight. */
  abortRequest(handler: Handler, reason: Error): void {
    if (this.handler === handler) this.destroy(reason)
  }

  // ResponseSink: the parser's findings, handed to the handler.
  onHead(status: number, statusText: string, headers: IncomingHttpHeaders): void {
    this.keepAliveHintMs = keepAliveHint(headers['keep-alive'])
    this.handler?.onResponseStart?.(this.control as RequestControl, status, headers, statusText)
  }

  onBody(bytes: Buffer): void {
    this.handler?.onResponseData?.(this.control as RequestControl, bytes)
  }

  onEnd(trailers: IncomingHttpHeaders): void {
    const handler = this.handler
    if (handler === null) return
    this.handler = null
    // A response may come before its request's body was all written (a 401 or 413 to a large
    // body): the rest of that body would precede the next request, so the connection is not reused.
    const bodyWritten = this.body === null || this.bodyOffset >= this.body.length
    this.body = null
    const reusable =
      bodyWritten && !this.dead && !this.closing && !this.parser.closeAfter && !this.socket.readableEnded
    if (!reusable) this.dead = true
    handler.onResponseEnd?.(this.control as RequestControl, trailers)
    this.owner.released(this, reusable)
  }

  onParseError(error: Error): void {
    this.destroy(error)
  }

  private write(): void {
    const handler = this.handler as Handler
    // The real send time: the handler stamps it here (after connecting), as undici's onRequestStart.
    handler.onRequestStart?.(this.control as RequestControl, {})
    if (this.handler !== handler) return
    const connectMs = this.connectMs ?? undefined
    this.connectMs = null
    handler.onSocket?.(this.socket, connectMs)
    const { socket, body } = this
    if (body === null || body.length <= BODY_SLICE_BYTES) {
      // Head and body in one buffer, one write: cork, two writes and uncork (a writev of two) cost
      // the worker more per request than the copy of a body this small (issue 40, bench:cost).
      socket.write(body === null ? this.head : headAndBody(this.head, body), 'latin1')
      this.bodyOffset = body?.length ?? 0
      return
    }
    socket.write(this.head, 'latin1')
    this.writeBody()
  }

  /** A large body, a slice at a time, waiting for 'drain' whenever the socket's buffer is full. */
  private readonly writeBody = (): void => {
    const body = this.body
    while (body !== null && this.handler !== null && this.bodyOffset < body.length) {
      const slice = body.subarray(this.bodyOffset, this.bodyOffset + BODY_SLICE_BYTES)
      this.bodyOffset += slice.length
      if (!this.socket.write(slice)) {
        this.socket.once('drain', this.writeBody)
        return
      }
    }
  }

  private readonly onLookup = (): void => {
    this.connectStartedAt = performance.now()
  }

  private readonly onTcpConnect = (): void => {
    this.connectMs = performance.now() - this.connectStartedAt
  }

  private readonly onConnect = (): void => {
    this.connected = true
    if (this.connectTimer !== null) clearTimeout(this.connectTimer)
    this.connectTimer = null
    if (this.handler !== null) this.write()
  }

  private readonly onConnectTimeout = (): void => {
    this.connectTimer = null
    if (this.connected) return
    const { host, port, tls, proxy } = this.origin
    const address =
      proxy == null
        ? `${host}:${port}`
        : tls
          ? `${host}:${port} through proxy ${proxy.origin}`
          : `proxy ${proxy.origin}`
    // TCP up (stamped by onTcpConnect), TLS not: the handshake hung, straight to the server only.
    const handshakeHung = tls && proxy == null && this.connectMs !== null
    this.destroy(new ConnectTimeoutError(address, this.connectTimeoutMs, handshakeHung))
  }

  /** A read into SHARED_READ (plain TCP): stamped first, then copied out of the shared buffer. */
  private readonly onReadInto = (bytes: number, into: Uint8Array): boolean => {
    this.readAt = performance.now()
    const read = Buffer.allocUnsafe(bytes)
    read.set(into.subarray(0, bytes))
    this.handleRead(read)
    return true
  }

  /** A read of its own (TLS, or a socket a test handed in). */
  private readonly onRead = (read: Buffer): void => {
    this.readAt = performance.now()
    this.handleRead(read)
  }

  private handleRead(read: Buffer): void {
    if (this.handler === null) {
      // Bytes nobody asked for, on an idle connection: it cannot be trusted with a request.
      this.dead = true
      this.socket.destroy()
      return
    }
    // A handler that throws (a bug of ours) fails its request, as undici does, not the thread.
    try {
      this.parser.push(read)
    } catch (error) {
      this.destroy(error as Error)
    }
  }

  /** The server's FIN: ends a close-delimited body; any other response in flight was cut. */
  private readonly onServerEnd = (): void => {
    this.readAt = performance.now()
    this.dead = true
    if (this.handler === null) {
      // An idle connection the server closed: out of the pool now, not at 'close' a turn later.
      this.socket.destroy()
      this.owner.closed(this)
      return
    }
    try {
      if (this.parser.endOfInput()) return
    } catch (error) {
      this.destroy(error as Error)
      return
    }
    this.fail(new SocketClosedError(this.parser.midResponse ? ' mid-response' : ''))
    this.socket.destroy()
  }

  private readonly onSocketError = (error: Error): void => {
    this.dead = true
    // The socket to the proxy failing before the connection is up (and, for https, before the
    // tunnel's TLS took over) is the proxy's failure: named as such.
    const proxy = this.origin.proxy
    const toProxy = proxy != null && !this.connected && !this.tunnelled
    this.fail(toProxy ? new ProxyConnectError(proxy.origin, error) : error)
  }

  private readonly onSocketClose = (): void => {
    this.dead = true
    if (this.connectTimer !== null) clearTimeout(this.connectTimer)
    this.connectTimer = null
    this.fail(new SocketClosedError(this.parser.midResponse ? ' mid-response' : ''))
    this.owner.closed(this)
  }

  /** The request in flight (if any) fails with `error`; the connection is not reused. */
  private fail(error: Error): void {
    const handler = this.handler
    if (handler === null) return
    this.handler = null
    this.body = null
    this.dead = true
    this.parser.halt()
    handler.onResponseError?.(this.control as RequestControl, error)
    this.owner.released(this, false)
  }
}

/**
 * One request's controller: what its handler may do to it. It acts only while that request is the
 * one in flight on its connection, so a handler that keeps it past the response's end (a compressed
 * body whose decoding fails later) cannot abort or pause the connection's next request. Its `readAt`
 * is the connection's (ReadStamped): the arrival of the read being handed on.
 */
class RequestControl implements Dispatcher.DispatchController {
  reason: Error | null = null

  constructor(
    private readonly connection: H1Connection,
    private readonly handler: Handler,
  ) {}

  get readAt(): number {
    return this.connection.readAt
  }
  get aborted(): boolean {
    return this.reason !== null
  }
  get paused(): boolean {
    return this.connection.carries(this.handler) && this.connection.socket.isPaused()
  }
  abort(reason: Error): void {
    if (!this.connection.carries(this.handler)) return
    this.reason = reason
    this.connection.abortRequest(this.handler, reason)
  }
  pause(): void {
    if (this.connection.carries(this.handler)) this.connection.socket.pause()
  }
  resume(): void {
    if (this.connection.carries(this.handler)) this.connection.socket.resume()
  }
}

/** `Keep-Alive: timeout=5, max=100` → 5000; null when absent or unreadable. */
function keepAliveHint(value: string | string[] | undefined): number | null {
  if (value === undefined) return null
  const match = /(?:^|[,\s])timeout\s*=\s*(\d+)/i.exec(Array.isArray(value) ? value.join(',') : value)
  return match === null ? null : Number(match[1]) * 1000
}

/** The request's head (latin1, as written) followed by its body, in one buffer. */
function headAndBody(head: string, body: Buffer): Buffer {
  const joined = Buffer.allocUnsafe(head.length + body.length)
  joined.write(head, 0, 'latin1')
  body.copy(joined, head.length)
  return joined
}
