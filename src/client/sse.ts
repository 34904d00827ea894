/**
 * An incremental Server-Sent Events parser that works on bytes, not strings.
 *
 * Why bytes: line terminators (CR, LF) are ASCII, so splitting on them never cuts a multi-byte
 * UTF-8 character; we decode a line only once it is complete, and a character split across two
 * network reads is simply carried in the pending bytes. Every event is stamped with the arrival
 * time of the read that completed it (the caller stamps the read before calling `push`).
 *
 * Follows the WHATWG event-stream rules (LF, CR or CRLF line ends; `:` comments; `data`, `event`,
 * `id`, `retry` fields; one optional space after the colon; multi-line data joined with LF) with
 * two deliberate departures, both to lose nothing a server sent:
 *  - a non-standard `error:` field (llama.cpp's mid-stream error) is surfaced, not ignored;
 *  - at EOF an event with no closing blank line is still dispatched (a strict parser drops it,
 *    which would drop e.g. a final usage chunk or `[DONE]` from servers that omit the blank line).
 */

export interface SseEvent {
  /** The `event:` field; '' when absent (the WHATWG default type is "message"). */
  event: string
  /** `data:` lines joined with LF; '' when the event had no data line. */
  data: string
  /** Value of the non-standard `error:` field, or null. */
  error: string | null
}

export type SseEventSink = (event: SseEvent, arrivedAt: number) => void

const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
const SPACE = 0x20

/** `data:` at `from` of a line that ends before `end`: d a t a : */
function isDataField(line: Buffer, from: number, end: number): boolean {
  return (
    end >= from + 5 &&
    line[from] === 0x64 &&
    line[from + 1] === 0x61 &&
    line[from + 2] === 0x74 &&
    line[from + 3] === 0x61 &&
    line[from + 4] === COLON
  )
}

export class SseParser {
  /** Bytes of a line that started in an earlier read and has not ended yet. */
  private pendingLine: Buffer[] = []
  /** A read ended in CR: if the next read starts with LF, that LF belongs to the same line end. */
  private skipLeadingLf = false
  private isFirstLine = true
  /**
   * The event's `data:` lines: the first apart, the rest (rare) in a list made when one comes, so the
   * common one-line event costs no array work (a push and a length reset per event were measurable).
   */
  private firstData: string | null = null
  private moreData: string[] | null = null
  private eventType = ''
  private errorField: string | null = null
  /** Comment lines seen (keep-alives such as sse-starlette's `: ping`). */
  comments = 0
  /** Events dispatched. */
  events = 0
  /** Bytes of the event being read that are held here (the caller bounds it). */
  pendingBytes = 0

  constructor(private readonly sink: SseEventSink) {}

  /** Feeds one network read. `arrivedAt` is the time the read arrived, taken before this call. */
  push(chunk: Buffer, arrivedAt: number): void {
    let start = 0
    const length = chunk.length
    if (this.skipLeadingLf && length > 0) {
      if (chunk[0] === LF) start = 1
      this.skipLeadingLf = false
    }
    // Line ends are found with Buffer.indexOf (native memchr), not a byte loop in JS; each
    // position is searched for again only once the scan has passed it, so a read costs O(n).
    let nextLf = chunk.indexOf(LF, start)
    let nextCr = chunk.indexOf(CR, start)
    while (nextLf !== -1 || nextCr !== -1) {
      const end = nextCr === -1 || (nextLf !== -1 && nextLf < nextCr) ? nextLf : nextCr
      this.takeLine(chunk, start, end, arrivedAt)
      start = end + 1
      if (chunk[end] === CR) {
        if (start < length) {
          if (chunk[start] === LF) start++
        } else {
          this.skipLeadingLf = true
        }
      }
      if (nextLf !== -1 && nextLf < start) nextLf = chunk.indexOf(LF, start)
      if (nextCr !== -1 && nextCr < start) nextCr = chunk.indexOf(CR, start)
    }
    if (start < length) {
      this.pendingLine.push(chunk.subarray(start))
      this.pendingBytes += length - start
    }
  }

  /** The body ended: finish a last unterminated line and event (see the file comment). */
  end(arrivedAt: number): void {
    if (this.pendingLine.length > 0) this.takeLine(Buffer.alloc(0), 0, 0, arrivedAt)
    this.dispatch(arrivedAt)
  }

  /**
   * A line is read where it lies (start..end of the read), not copied into a Buffer view of its
   * own: a view per line was a measurable share of the per-event cost.
   */
  private takeLine(chunk: Buffer, start: number, end: number, arrivedAt: number): void {
    if (this.pendingLine.length === 0) {
      this.processLine(chunk, start, end, arrivedAt)
      return
    }
    this.pendingLine.push(chunk.subarray(start, end))
    const line = Buffer.concat(this.pendingLine)
    this.pendingLine = []
    this.pendingBytes = 0
    this.processLine(line, 0, line.length, arrivedAt)
  }

  private processLine(line: Buffer, start: number, end: number, arrivedAt: number): void {
    let from = start
    if (this.isFirstLine) {
      this.isFirstLine = false
      // A UTF-8 byte-order mark before the first line is not part of the field name.
      if (end - from >= 3 && line[from] === 0xef && line[from + 1] === 0xbb && line[from + 2] === 0xbf)
        from += 3
    }
    if (end === from) {
      this.dispatch(arrivedAt)
      return
    }
    if (line[from] === COLON) {
      this.comments++
      return
    }
    if (isDataField(line, from, end)) {
      // The common case, without allocating the field name.
      const valueStart = from + 5 < end && line[from + 5] === SPACE ? from + 6 : from + 5
      this.addData(line.toString('utf8', valueStart, end))
      return
    }
    const found = line.indexOf(COLON, from)
    const colon = found < end ? found : -1
    let field: string
    let value: string
    if (colon === -1) {
      field = line.toString('latin1', from, end)
      value = ''
    } else {
      field = line.toString('latin1', from, colon)
      const valueStart = colon + 1 < end && line[colon + 1] === SPACE ? colon + 2 : colon + 1
      value = line.toString('utf8', valueStart, end)
    }
    switch (field) {
      case 'data':
        this.addData(value)
        break
      case 'event':
        this.eventType = value
        break
      case 'error':
        this.errorField = value
        break
      default:
        // id, retry and unknown fields carry nothing a benchmark needs.
        break
    }
  }

  private addData(value: string): void {
    if (this.firstData === null) this.firstData = value
    else if (this.moreData === null) this.moreData = [value]
    else this.moreData.push(value)
  }

  private dispatch(arrivedAt: number): void {
    const first = this.firstData
    if (first === null && this.errorField === null) {
      this.eventType = ''
      return
    }
    const data = first === null ? '' : this.moreData === null ? first : [first, ...this.moreData].join('\n')
    const event: SseEvent = { event: this.eventType, data, error: this.errorField }
    this.firstData = null
    this.moreData = null
    this.eventType = ''
    this.errorField = null
    this.events++
    this.sink(event, arrivedAt)
  }
}
