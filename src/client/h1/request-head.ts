import type { Dispatcher } from 'undici'
import type { ProxyRoute } from '../proxy.js'
import { InvalidRequestError } from './errors.js'

/**
 * The bytes of a request's head. Every request of a run has the same method, path and headers, so
 * the part before Content-Length is built (and checked) once per headers object and reused.
 */

/** Framing is ours to write: these request headers from the caller are dropped. */
const OURS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** No CR, LF or NUL in a value: they would end the header early (request smuggling). */
const UNSAFE_VALUE = /[\r\n\0]/

/** The request body as the h1 client writes it. */
export function bodyOf(body: Dispatcher.DispatchOptions['body']): Buffer | null {
  if (body === null || body === undefined) return null
  if (typeof body === 'string') return Buffer.from(body)
  if (Buffer.isBuffer(body)) return body
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  throw new InvalidRequestError('the body must be a string or bytes')
}

export class RequestHeads {
  private lastHeaders: unknown = null
  private lastKey = ''
  private lastPrefix = ''

  /**
   * `host`: the Host header's value (host, and port when not the scheme's default). `forward`: the
   * requests go to a proxy, so each names the server's origin (absolute form, RFC 9112 3.2.2) and
   * carries the proxy's credentials.
   */
  constructor(
    private readonly host: string,
    private readonly forward: { origin: string; proxy: ProxyRoute } | null = null,
  ) {}

  /** The head of one request, ready to write as latin1. */
  build(options: Dispatcher.DispatchOptions, bodyLength: number | null, close: boolean): string {
    const key = `${options.method} ${options.path} ${close}`
    if (options.headers !== this.lastHeaders || key !== this.lastKey) {
      this.lastPrefix = this.prefix(options, close)
      this.lastHeaders = options.headers
      this.lastKey = key
    }
    if (bodyLength === null) {
      const method = options.method
      return method === 'GET' || method === 'HEAD'
        ? `${this.lastPrefix}\r\n`
        : `${this.lastPrefix}content-length: 0\r\n\r\n`
    }
    return `${this.lastPrefix}content-length: ${bodyLength}\r\n\r\n`
  }

  private prefix(options: Dispatcher.DispatchOptions, close: boolean): string {
    const { method, path } = options
    if (!TOKEN.test(method)) throw new InvalidRequestError(`method ${JSON.stringify(method)}`)
    if (!path.startsWith('/') || /[\s\0]/.test(path))
      throw new InvalidRequestError(`path ${JSON.stringify(path)}`)
    const forward = this.forward
    let head = `${method} ${forward === null ? '' : forward.origin}${path} HTTP/1.1\r\n`
    if (forward?.proxy.authorization != null)
      head += `proxy-authorization: ${forward.proxy.authorization}\r\n`
    let host: string | null = null
    let fields = ''
    for (const [name, value] of headerEntries(options.headers)) {
      if (value === undefined) continue
      if (!TOKEN.test(name)) throw new InvalidRequestError(`header name ${JSON.stringify(name)}`)
      const lower = name.toLowerCase()
      // Through a proxy, its credentials are the proxy URL's (client/proxy.ts), written above.
      if (OURS.has(lower) || (forward !== null && lower === 'proxy-authorization')) continue
      for (const one of Array.isArray(value) ? value : [value]) {
        // The name only: a value may be a credential.
        if (UNSAFE_VALUE.test(one)) throw new InvalidRequestError(`header ${name} holds CR, LF or NUL`)
        if (lower === 'host') host = one
        else fields += `${name}: ${one}\r\n`
      }
    }
    head += `host: ${host ?? this.host}\r\n${fields}`
    head += close ? 'connection: close\r\n' : 'connection: keep-alive\r\n'
    return head
  }
}

function headerEntries(
  headers: Dispatcher.DispatchOptions['headers'],
): [string, string | string[] | undefined][] {
  if (headers === null || headers === undefined) return []
  if (Array.isArray(headers)) throw new InvalidRequestError('headers must be an object')
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function')
    return [...(headers as Iterable<[string, string | string[] | undefined]>)]
  return Object.entries(headers as Record<string, string | string[] | undefined>)
}
