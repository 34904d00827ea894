/**
 * Transport errors of the h1 client. Their codes are the ones undici gives the same failures, so
 * classify.ts, failure-cause.ts and every stored message read the same whichever client sent the
 * request: 'connection' for a socket the server closed, 'timeout' (kind 'connect') for a connection
 * not made in time.
 */

/** The server closed the connection before the response was complete. */
export class SocketClosedError extends Error {
  readonly code = 'UND_ERR_SOCKET'
  constructor(detail: string) {
    super(`other side closed${detail}`)
    this.name = 'SocketClosedError'
  }
}

/**
 * TCP (and TLS) set-up took longer than the connect timeout. `tcpConnected`: the server took the TCP
 * connection and the TLS handshake hung, which is not an unreachable host (failure-cause.ts).
 */
export class ConnectTimeoutError extends Error {
  readonly code = 'UND_ERR_CONNECT_TIMEOUT'
  constructor(address: string, timeoutMs: number, tcpConnected = false) {
    super(
      tcpConnected
        ? `TLS handshake timeout: ${address} took the TCP connection but did not finish the TLS handshake within ${timeoutMs} ms`
        : `connect timeout: no connection to ${address} within ${timeoutMs} ms`,
    )
    this.name = 'ConnectTimeoutError'
  }
}

/** A request given to a pool that was closed. */
export class PoolClosedError extends Error {
  readonly code = 'UND_ERR_DESTROYED'
  constructor() {
    super('the connection pool was closed')
    this.name = 'PoolClosedError'
  }
}

/** A request the client cannot write (a header with CR or LF, a body it does not take). */
export class InvalidRequestError extends Error {
  readonly code = 'UND_ERR_INVALID_ARG'
  constructor(what: string) {
    super(`invalid request: ${what}`)
    this.name = 'InvalidRequestError'
  }
}

/**
 * The proxy answered the tunnel's CONNECT with something other than 2xx (407: it wants credentials;
 * 403: its policy forbids the host; 502: it could not reach it). Its code classifies it as a
 * connection failure; failure-cause.ts tells it from an unreachable host by the proxy it names.
 */
export class ProxyRefusedError extends Error {
  readonly code = 'LLMBENCH_PROXY_REFUSED'
  constructor(
    proxy: string,
    authority: string,
    readonly status: number | null,
    answer: string,
  ) {
    super(`proxy ${proxy} refused the tunnel (CONNECT ${authority}): ${answer}`)
    this.name = 'ProxyRefusedError'
  }
}

/** The connection to the proxy itself failed: the socket's error, naming the proxy, with its code. */
export class ProxyConnectError extends Error {
  readonly code: string | undefined
  constructor(proxy: string, cause: Error) {
    super(`proxy ${proxy}: ${cause.message}`)
    this.name = 'ProxyConnectError'
    this.code = (cause as { code?: string }).code
  }
}
