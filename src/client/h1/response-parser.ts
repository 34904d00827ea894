import type { IncomingHttpHeaders } from 'node:http'

/**
 * An incremental HTTP/1.1 response parser for the streaming hot path: status line and headers,
 * then the body framed by chunked transfer coding, Content-Length, or the connection's close;
 * trailers read and handed on; 1xx interim responses skipped. It never buffers without bound: a
 * head (or trailer section) over MAX_HEAD_BYTES and a chunk-size line over MAX_CHUNK_LINE_BYTES are
 * errors.
 *
 * Body bytes are never copied or converted: the sink gets subarrays of the read that carried them
 * (chunk framing is parsed in place). A read with several chunks gives several onBody calls, as
 * llhttp's on_body does. The sink is an object with methods, not closures, so a read allocates
 * nothing here beyond its subarrays.
 *
 * Why hand-written and not Node's llhttp binding (`HTTPParser` of node:_http_common): measured in
 * bench/h1-parser.ts, see docs/benchmarks.md.
 */

/** What a parsed response tells its connection. Any call may halt() the parser (an abort). */
export interface ResponseSink {
  /** The final (non-1xx) response's status and headers (lower-case names; repeats become arrays). */
  onHead(status: number, statusText: string, headers: IncomingHttpHeaders): void
  onBody(bytes: Buffer): void
  /** The body is complete; `trailers` is empty when there were none. */
  onEnd(trailers: IncomingHttpHeaders): void
  /** The response is malformed; the parser stops. */
  onParseError(error: HttpParseError): void
}

/** A status line, header section or chunk larger than these is a broken response. */
export const MAX_HEAD_BYTES = 64 * 1024
/** Hex digits, extensions and line end of one chunk-size line. */
export const MAX_CHUNK_LINE_BYTES = 1024

/** A response that does not follow HTTP/1.1's grammar. The code names it for classify.ts. */
export class HttpParseError extends Error {
  readonly code = 'LLMBENCH_HTTP_MALFORMED'
  constructor(what: string) {
    super(`malformed HTTP response: ${what}`)
    this.name = 'HttpParseError'
  }
}

/** How the body of the response being read ends. */
export type Framing = 'none' | 'length' | 'chunked' | 'close'

enum State {
  /** Status line and headers. */
  Head,
  /** Content-Length bytes left in `remaining`. */
  LengthBody,
  /** Until the connection closes. */
  CloseBody,
  /** A chunk-size line: hex digits, then `;extensions`, then CRLF. */
  ChunkSize,
  /** `remaining` bytes of chunk data. */
  ChunkData,
  /** The CRLF after a chunk's data. */
  ChunkDataEnd,
  /** Trailer fields after the last chunk, up to an empty line. */
  Trailers,
  /** The response is complete: any further byte is an error. */
  Done,
  /** Stopped by an error or halt(). */
  Halted,
}

const LF = 0x0a
const CR = 0x0d
const SEMICOLON = 0x3b
const SPACE = 0x20
const TAB = 0x09
/** More hex digits than this would overflow a double's exact integers (2^52). */
const MAX_SIZE_DIGITS = 13
const NO_TRAILERS: IncomingHttpHeaders = Object.freeze(fieldTable())

/** Value of a hex digit byte, or -1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  const lower = byte | 0x20
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10
  return -1
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r\n]*))?$/
/** RFC 9110 token characters: a field name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Field values: visible characters, spaces, tabs and obs-text; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

export class ResponseParser {
  private state = State.Head
  /** Head (or trailer) bytes that arrived in earlier reads. */
  private pending: Buffer[] = []
  private pendingBytes = 0
  /** Bytes of the current head line so far, not counting a CR; an LF after zero of them ends the head. */
  private lineBytes = 0
  private remaining = 0
  private sizeDigits = 0
  /** A chunk-size line's extension (after `;`) or trailing spaces: skipped to its LF. */
  private inExtension = false
  private sizeLineBytes = 0
  /** The chunk-size line had its CR: only LF may follow. */
  private sizeCr = false
  /** The CRLF after a chunk's data: 0 = expecting CR or LF, 1 = after CR, expecting LF. */
  private afterDataCr = false
  /** HTTP/1.0 response, or `connection: close`: the connection is not reused after it. */
  closeAfter = false
  /** The request was a HEAD: a response has no body whatever its headers say. */
  private headRequest = false

  constructor(private readonly sink: ResponseSink) {}

  /** Ready for the response to the next request on the same connection. */
  reset(headRequest = false): void {
    this.state = State.Head
    this.pending = []
    this.pendingBytes = 0
    this.lineBytes = 0
    this.closeAfter = false
    this.headRequest = headRequest
  }

  /** Stop: nothing more reaches the sink (the request was aborted, or the connection failed). */
  halt(): void {
    this.state = State.Halted
    this.pending = []
  }

  /** Between responses: a byte now is not part of any response. */
  get idle(): boolean {
    return (
      this.state === State.Done ||
      (this.state === State.Head && this.pendingBytes === 0 && this.lineBytes === 0)
    )
  }

  /** The response is complete. */
  get done(): boolean {
    return this.state === State.Done
  }

  /** Feeds one read. */
  push(read: Buffer): void {
    let at = 0
    const end = read.length
    while (at < end) {
      switch (this.state) {
        case State.Head:
          at = this.readHead(read, at, State.Head)
          break
        case State.LengthBody: {
          const take = Math.min(this.remaining, end - at)
          this.remaining -= take
          const from = at
          at += take
          this.sink.onBody(from === 0 && take === end ? read : read.subarray(from, at))
          if (this.remaining === 0 && this.state === State.LengthBody)
            at = this.complete(read, at, NO_TRAILERS)
          break
        }
        case State.CloseBody:
          this.sink.onBody(at === 0 ? read : read.subarray(at))
          return
        case State.ChunkSize:
          at = this.readChunkSize(read, at)
          break
        case State.ChunkData: {
          const take = Math.min(this.remaining, end - at)
          this.remaining -= take
          const from = at
          at += take
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd
            this.afterDataCr = false
          }
          this.sink.onBody(read.subarray(from, at))
          break
        }
        case State.ChunkDataEnd:
          at = this.readDataEnd(read, at)
          break
        case State.Trailers:
          at = this.readHead(read, at, State.Trailers)
          break
        case State.Done:
          // A later read on a connection whose response has ended (the earlier one was complete).
          this.fail('bytes after the end of the response')
          return
        case State.Halted:
          return
      }
    }
  }

  /**
   * The connection closed (its FIN). True when that ends the response being read normally (a
   * close-delimited body); false when a response was cut, or none had begun.
   */
  endOfInput(): boolean {
    if (this.state !== State.CloseBody) return false
    this.state = State.Done
    this.sink.onEnd(NO_TRAILERS)
    return true
  }

  /** Whether a response had begun and not ended when the connection closed. */
  get midResponse(): boolean {
    return this.state !== State.Done && this.state !== State.Halted && !this.idle
  }

  private fail(what: string): void {
    this.halt()
    this.sink.onParseError(new HttpParseError(what))
  }

  /**
   * The response ended at `at` of this read. Requests are not pipelined, so a byte after it is
   * garbage: the response fails rather than ends (and the connection is not reused).
   */
  private complete(read: Buffer, at: number, trailers: IncomingHttpHeaders): number {
    if (at < read.length) {
      this.fail('bytes after the end of the response')
      return read.length
    }
    this.state = State.Done
    this.sink.onEnd(trailers)
    return at
  }

  /**
   * Head or trailer bytes from `from`, up to the empty line that ends them. Lines end in LF with an
   * optional CR before it. Returns where the section ended in this read, or the read's end.
   */
  private readHead(read: Buffer, from: number, state: State.Head | State.Trailers): number {
    let at = from
    const end = read.length
    let lineBytes = this.lineBytes
    let complete = false
    while (at < end) {
      const byte = read[at++]
      if (byte === LF) {
        if (lineBytes === 0) {
          complete = true
          break
        }
        lineBytes = 0
      } else if (byte !== CR) {
        lineBytes++
      }
    }
    this.lineBytes = lineBytes
    const size = this.pendingBytes + (at - from)
    if (size > MAX_HEAD_BYTES) {
      this.fail(`${state === State.Head ? 'header' : 'trailer'} section over ${MAX_HEAD_BYTES / 1024} KiB`)
      return end
    }
    if (!complete) {
      this.pending.push(read.subarray(from, at))
      this.pendingBytes = size
      return at
    }
    const section =
      this.pendingBytes === 0
        ? read.toString('latin1', from, at)
        : Buffer.concat([...this.pending, read.subarray(from, at)]).toString('latin1')
    this.pending = []
    this.pendingBytes = 0
    const trailers = state === State.Head ? this.onHeadSection(section) : this.onTrailerSection(section)
    // A body-less response (or the trailers) ended it: onHead has run, onEnd comes now.
    return trailers === null ? at : this.complete(read, at, trailers)
  }

  /** Returns NO_TRAILERS when the response has ended with its head (no body), else null. */
  private onHeadSection(section: string): IncomingHttpHeaders | null {
    const lines = section.split('\n')
    const statusLine = trimCr(lines[0] ?? '')
    const match = STATUS_LINE.exec(statusLine)
    if (match === null) {
      this.fail(`bad status line ${JSON.stringify(statusLine.slice(0, 80))}`)
      return null
    }
    const headers = parseFields(lines, 1)
    if (typeof headers === 'string') {
      this.fail(headers)
      return null
    }
    const status = Number(match[2])
    if (status < 100) {
      this.fail(`bad status code ${status}`)
      return null
    }
    if (status < 200) {
      // 101 would switch protocols: never asked for, so a 101 is as broken as any other surprise.
      if (status === 101) this.fail('101 Switching Protocols without an Upgrade request')
      // Other 1xx (100 Continue, 103 Early Hints): interim; the final response follows.
      return null
    }
    const http10 = match[1] === '0'
    const connection = headerText(headers.connection).toLowerCase()
    this.closeAfter = http10 ? !hasToken(connection, 'keep-alive') : hasToken(connection, 'close')
    const framing = this.framingOf(status, headers)
    if (framing === null) return null
    this.state =
      framing === 'chunked'
        ? State.ChunkSize
        : framing === 'length'
          ? State.LengthBody
          : framing === 'close'
            ? State.CloseBody
            : State.Head
    if (framing === 'chunked') this.startChunkSize()
    if (framing === 'close') this.closeAfter = true
    this.sink.onHead(status, match[3] ?? '', headers)
    // Halted by the sink (an abort) or not: only a body-less response that is still read ends here.
    return framing === 'none' && this.state === State.Head ? NO_TRAILERS : null
  }

  /** RFC 9112 6.3: how this response's body ends; null after a failure. */
  private framingOf(status: number, headers: IncomingHttpHeaders): Framing | null {
    if (this.headRequest || status === 204 || status === 304) return 'none'
    const transferEncoding = headers['transfer-encoding']
    if (transferEncoding !== undefined) {
      // Content-Length beside Transfer-Encoding is ignored, and the connection not reused (6.1).
      if (headers['content-length'] !== undefined) this.closeAfter = true
      const codings = headerText(transferEncoding).toLowerCase().split(',')
      return trimWhiteSpace(codings.at(-1) ?? '') === 'chunked' ? 'chunked' : 'close'
    }
    const contentLength = headers['content-length']
    if (contentLength === undefined) return 'close'
    // Repeats (a list or several fields) are allowed only when they all say the same.
    const values = headerText(contentLength).split(',').map(trimWhiteSpace)
    const length = values[0] as string
    if (!/^\d{1,15}$/.test(length) || values.some((value) => value !== length)) {
      this.fail(`bad content-length ${JSON.stringify(headerText(contentLength).slice(0, 40))}`)
      return null
    }
    this.remaining = Number(length)
    return this.remaining === 0 ? 'none' : 'length'
  }

  private startChunkSize(): void {
    this.remaining = 0
    this.sizeDigits = 0
    this.inExtension = false
    this.sizeLineBytes = 0
    this.sizeCr = false
  }

  /** Hex size, optional spaces and `;extensions`, CRLF (or LF). Returns where reading stopped. */
  private readChunkSize(read: Buffer, from: number): number {
    let at = from
    const end = read.length
    while (at < end) {
      const byte = read[at++] as number
      if (++this.sizeLineBytes > MAX_CHUNK_LINE_BYTES) {
        this.fail(`chunk-size line over ${MAX_CHUNK_LINE_BYTES} bytes`)
        return end
      }
      if (byte === LF) {
        if (this.sizeDigits === 0) {
          this.fail('chunk-size line without a size')
          return end
        }
        if (this.remaining === 0) {
          this.state = State.Trailers
          this.lineBytes = 0
        } else {
          this.state = State.ChunkData
        }
        return at
      }
      if (this.sizeCr) {
        this.fail('CR without LF in a chunk-size line')
        return end
      }
      if (byte === CR && this.sizeDigits > 0) {
        this.sizeCr = true
        continue
      }
      if (this.inExtension) continue
      const digit = hexValue(byte)
      if (digit >= 0) {
        if (++this.sizeDigits > MAX_SIZE_DIGITS) {
          this.fail('chunk size too large')
          return end
        }
        this.remaining = this.remaining * 16 + digit
      } else if (this.sizeDigits > 0 && (byte === SEMICOLON || byte === SPACE || byte === TAB)) {
        this.inExtension = true
      } else {
        this.fail(`bad chunk size (byte 0x${byte.toString(16).padStart(2, '0')})`)
        return end
      }
    }
    return at
  }

  /** The CRLF that closes a chunk's data; then the next chunk-size line. */
  private readDataEnd(read: Buffer, from: number): number {
    const byte = read[from]
    if (byte === CR && !this.afterDataCr) {
      this.afterDataCr = true
      return from + 1
    }
    if (byte === LF) {
      this.state = State.ChunkSize
      this.startChunkSize()
      return from + 1
    }
    this.fail('chunk data longer than its size (no CRLF after it)')
    return read.length
  }

  /** The fields after the last chunk, or null after a failure. */
  private onTrailerSection(section: string): IncomingHttpHeaders | null {
    const fields = parseFields(section.split('\n'), 0)
    if (typeof fields === 'string') {
      this.fail(fields)
      return null
    }
    return Object.keys(fields).length === 0 ? NO_TRAILERS : fields
  }
}

function trimCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}

/**
 * An empty table of fields without a prototype: a field named `__proto__` or `constructor` is a
 * field like any other (on a plain object, `__proto__` would set the table's prototype and both
 * would find Object.prototype's members as values already there).
 */
function fieldTable(): IncomingHttpHeaders {
  return Object.create(null) as IncomingHttpHeaders
}

/** Header (or trailer) fields from `lines[from]` on; a string says what is wrong. */
function parseFields(lines: string[], from: number): IncomingHttpHeaders | string {
  const headers = fieldTable()
  for (let index = from; index < lines.length; index++) {
    const line = trimCr(lines[index] as string)
    if (line === '') continue
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon) : ''
    // No obs-fold (a line starting with white space), no space before the colon (RFC 9112 5.1-5.2).
    if (!TOKEN.test(name)) return `bad header line ${JSON.stringify(line.slice(0, 80))}`
    const value = trimWhiteSpace(line.slice(colon + 1))
    if (!FIELD_VALUE.test(value)) return `bad value of header ${name}`
    const key = name.toLowerCase()
    const before = headers[key]
    if (before === undefined) headers[key] = value
    else if (Array.isArray(before)) before.push(value)
    else headers[key] = [before, value]
  }
  return headers
}

/**
 * Without the spaces and tabs around it (HTTP's OWS), and nothing else: String.trim() would also
 * take a value's NBSP (byte 0xA0 read as latin1, which is obs-text) and vertical tab or form feed
 * (control characters that make the value bad).
 */
function trimWhiteSpace(text: string): string {
  let from = 0
  let to = text.length
  while (from < to && isWhiteSpace(text.charCodeAt(from))) from++
  while (to > from && isWhiteSpace(text.charCodeAt(to - 1))) to--
  return from === 0 && to === text.length ? text : text.slice(from, to)
}

function isWhiteSpace(code: number): boolean {
  return code === SPACE || code === TAB
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(',') : (value ?? '')
}

function hasToken(list: string, token: string): boolean {
  return list.split(',').some((part) => trimWhiteSpace(part) === token)
}
