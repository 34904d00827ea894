/**
 * Raw HTTP/1.1 responses built around a recorded body, and where their framing bytes sit: the
 * positions a split of the reads must cover (head, chunk-size lines, the CRLF after each chunk's
 * data, the last chunk and the trailers).
 */
export interface FramedResponse {
  bytes: Buffer
  /** Offsets (0 < offset < bytes.length) inside or at the edge of framing bytes. */
  framingOffsets: number[]
}

const HEAD =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nCache-Control: no-cache\r\n' +
  'Keep-Alive: timeout=5, max=100\r\n'

/** Each piece of `pieces` as one chunk; `style` varies the size line (hex case, an extension). */
export function chunked(
  pieces: readonly Buffer[],
  style: { upperHex?: boolean; extension?: boolean; trailer?: boolean } = {},
): FramedResponse {
  const parts: Buffer[] = [Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n`)]
  const framing: [number, number][] = [[0, parts[0]?.length ?? 0]]
  let at = parts[0]?.length ?? 0
  const add = (part: Buffer, isFraming: boolean): void => {
    if (isFraming) framing.push([at, at + part.length])
    parts.push(part)
    at += part.length
  }
  pieces.forEach((piece, index) => {
    if (piece.length === 0) return
    let size = piece.length.toString(16)
    if (style.upperHex === true) size = size.toUpperCase()
    const extension = style.extension === true && index % 2 === 0 ? ';name="value";x' : ''
    add(Buffer.from(`${size}${extension}\r\n`), true)
    add(piece, false)
    add(Buffer.from('\r\n'), true)
  })
  add(Buffer.from(style.trailer === true ? '0\r\nx-trailer: done\r\n\r\n' : '0\r\n\r\n'), true)
  const bytes = Buffer.concat(parts)
  const offsets = new Set<number>()
  for (const [from, to] of framing)
    for (let offset = from; offset <= to; offset++)
      if (offset > 0 && offset < bytes.length) offsets.add(offset)
  return { bytes, framingOffsets: [...offsets].sort((a, b) => a - b) }
}

/** The body with a Content-Length. */
export function withLength(body: Buffer): FramedResponse {
  const head = Buffer.from(`${HEAD}Content-Length: ${body.length}\r\n\r\n`)
  return { bytes: Buffer.concat([head, body]), framingOffsets: range(1, head.length + 1) }
}

/** The body ended by the connection's close (no length, not chunked). */
export function closeDelimited(body: Buffer): FramedResponse {
  const head = Buffer.from(
    `${HEAD.replace('Keep-Alive: timeout=5, max=100\r\n', '')}Connection: close\r\n\r\n`,
  )
  return { bytes: Buffer.concat([head, body]), framingOffsets: range(1, head.length + 1) }
}

/** The SSE events of a recording, each with its blank line: one chunk per event, as servers flush them. */
export function sseEvents(body: Buffer): Buffer[] {
  return body
    .toString('latin1')
    .split(/(?<=\n\r?\n)/)
    .map((event) => Buffer.from(event, 'latin1'))
}

/** Fixed-size pieces (cutting events and UTF-8 characters anywhere). */
export function fixedPieces(body: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = []
  for (let offset = 0; offset < body.length; offset += size) pieces.push(body.subarray(offset, offset + size))
  return pieces
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, index) => from + index)
}

/** One way of framing a recording: the raw response, whether the close ends it, its trailers. */
export interface Framing {
  name: string
  framed: FramedResponse
  closeEnds: boolean
  trailers: Record<string, string>
}

/** Chunked a chunk per event; chunked in 61-byte chunks with upper-case hex, extensions and a trailer; Content-Length; close-delimited. */
export function everyFraming(body: Buffer): Framing[] {
  return [
    { name: 'chunked, a chunk per event', framed: chunked(sseEvents(body)), closeEnds: false, trailers: {} },
    {
      name: 'chunked, 61-byte chunks, upper-case hex, extensions, a trailer',
      framed: chunked(fixedPieces(body, 61), { upperHex: true, extension: true, trailer: true }),
      closeEnds: false,
      trailers: { 'x-trailer': 'done' },
    },
    { name: 'content-length', framed: withLength(body), closeEnds: false, trailers: {} },
    { name: 'close-delimited', framed: closeDelimited(body), closeEnds: true, trailers: {} },
  ]
}
