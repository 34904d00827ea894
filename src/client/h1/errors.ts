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

/** TCP (and TLS) set-up took longer than the connect timeout. */
export class ConnectTimeoutError extends Error {
  readonly code = 'UND_ERR_CONNECT_TIMEOUT'
  constructor(address: string, timeoutMs: number) {
    super(`connect timeout: no connection to ${address} within ${timeoutMs} ms`)
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
