import type { ErrorClass } from '../records/types.js'

export type TimeoutKind = 'connect' | 'first_token' | 'idle' | 'total'

const TIMEOUT_WORDS: Record<TimeoutKind, string> = {
  connect: 'no connection',
  first_token: 'no first token',
  idle: 'no bytes for',
  total: 'no complete response',
}

/** Raised by our own timers: lets the error handler tell our timeout from a network failure. */
export class RequestTimeoutError extends Error {
  constructor(
    readonly kind: TimeoutKind,
    readonly timeoutMs: number,
  ) {
    super(
      kind === 'idle'
        ? `${TIMEOUT_WORDS.idle} ${timeoutMs / 1000} s mid-response (idle timeout)`
        : `${TIMEOUT_WORDS[kind]} within ${timeoutMs / 1000} s (${kind.replace('_', '-')} timeout)`,
    )
    this.name = 'RequestTimeoutError'
  }
}

/** The user interrupted the run and the in-flight request outlived the drain's grace period. */
export class InterruptedError extends Error {
  constructor(graceMs: number) {
    super(`interrupted: still in flight ${graceMs / 1000} s after Ctrl-C, cut`)
    this.name = 'InterruptedError'
  }
}

/** A response cut at one of our size bounds (an endless or oversized stream). */
export class StreamLimitError extends Error {
  constructor(what: string) {
    super(`response cut: ${what}`)
    this.name = 'StreamLimitError'
  }
}

/** Which timeout a transport error is, when it is one. */
export function timeoutKindOf(error: unknown): TimeoutKind | null {
  if (error instanceof RequestTimeoutError) return error.kind
  const code = errorCode(error)
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect'
  if (code !== undefined && TIMEOUT_CODES.has(code)) return 'total'
  return null
}

/** Class of an HTTP error status, as docs/results.md "requests.jsonl" names them (429 is kept apart: it means rate limits). */
export function classifyStatus(status: number): ErrorClass {
  if (status === 429) return 'http_429'
  if (status >= 500) return 'http_5xx'
  if (status >= 400) return 'http_4xx'
  return 'other'
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'LLMBENCH_PROXY_REFUSED',
])

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** Class of a thrown transport error (undici or Node net/tls). */
export function classifyTransportError(error: unknown): ErrorClass {
  if (error instanceof RequestTimeoutError) return 'timeout'
  const code = errorCode(error)
  if (code !== undefined && TIMEOUT_CODES.has(code)) return 'timeout'
  if (code !== undefined && CONNECTION_CODES.has(code)) return 'connection'
  return 'other'
}

/** undici wraps the socket error: the code may sit on the error or on its cause. */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 3 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Human text of a transport error, including its cause (undici's "fetch failed"-style wrappers). */
export function describeTransportError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = errorCode(error)
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${code !== undefined ? `${code} ` : ''}${error.message}${cause}`
}
