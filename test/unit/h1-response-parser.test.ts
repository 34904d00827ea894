/**
 * The h1 client's hand-written response parser, hard: every recording framed every way and split at
 * every byte offset of its framing gives back exactly the recorded body bytes and one end; every
 * malformed response is an error (never an end, never a hang), and the limits hold.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { test } from 'node:test'
import {
  type HttpParseError,
  MAX_CHUNK_LINE_BYTES,
  MAX_HEAD_BYTES,
  ResponseParser,
  type ResponseSink,
} from '../../src/client/h1/response-parser.js'
import { SSE_FIXTURE_DIR } from '../helpers/fixtures.js'
import { chunked, everyFraming, fixedPieces } from '../helpers/http-framing.js'
import { allRecordings } from '../helpers/recordings.js'
import { splitAt } from '../helpers/replay-socket.js'

/** What the parser told its sink. */
class Recorder implements ResponseSink {
  heads: { status: number; text: string; headers: IncomingHttpHeaders }[] = []
  body: Buffer[] = []
  ends: IncomingHttpHeaders[] = []
  errors: HttpParseError[] = []
  onHead(status: number, text: string, headers: IncomingHttpHeaders): void {
    this.heads.push({ status, text, headers })
  }
  onBody(bytes: Buffer): void {
    // A copy: the test checks what arrived, not what the buffer holds later.
    this.body.push(Buffer.from(bytes))
  }
  onEnd(trailers: IncomingHttpHeaders): void {
    this.ends.push(trailers)
  }
  onParseError(error: HttpParseError): void {
    this.errors.push(error)
  }
}

function parse(reads: readonly Buffer[], closeAtEnd = false): Recorder {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  for (const read of reads) parser.push(read)
  if (closeAtEnd) parser.endOfInput()
  return recorder
}

function parseText(text: string, closeAtEnd = false): Recorder {
  return parse([Buffer.from(text, 'latin1')], closeAtEnd)
}

const BODIES = allRecordings()

/**
 * Checks the body as it arrives, against the recording, without copying it (the exhaustive splits
 * parse a few thousand responses of up to 200 KB).
 */
class BodyChecker implements ResponseSink {
  private at = 0
  ends = 0
  mismatch: string | null = null
  trailers: IncomingHttpHeaders = {}
  constructor(private readonly expected: Buffer) {}
  onHead(status: number): void {
    if (status !== 200) this.mismatch ??= `status ${status}`
  }
  onBody(bytes: Buffer): void {
    if (!bytes.equals(this.expected.subarray(this.at, this.at + bytes.length)))
      this.mismatch ??= `body differs at byte ${this.at}`
    this.at += bytes.length
  }
  onEnd(trailers: IncomingHttpHeaders): void {
    this.ends++
    this.trailers = { ...trailers }
    if (this.at !== this.expected.length)
      this.mismatch ??= `ended after ${this.at} of ${this.expected.length} bytes`
  }
  onParseError(error: HttpParseError): void {
    this.mismatch ??= error.message
  }
}

function checkSplit(
  reads: readonly Buffer[],
  close: boolean,
  body: Buffer,
  trailers: IncomingHttpHeaders,
  what: string,
): void {
  const checker = new BodyChecker(body)
  const parser = new ResponseParser(checker)
  for (const read of reads) parser.push(read)
  if (close) parser.endOfInput()
  if (checker.mismatch !== null || checker.ends !== 1)
    assert.fail(`${what}: ${checker.mismatch ?? `${checker.ends} ends`}`)
  assert.deepEqual(checker.trailers, trailers, what)
}

/**
 * Every framing offset, for the 95 of the 120 framed responses that have at most 600 of them; for
 * the other 25 (long streams in small chunks), the first 400 offsets (the head and the first chunks)
 * and the last 200 (the last chunks, the end, the trailers). The middle repeats the same parser
 * states, and the one-byte reads put a read boundary at every offset of every response anyway;
 * all of them would take minutes (offsets × response length).
 */
function sampledOffsets(offsets: readonly number[]): readonly number[] {
  return offsets.length <= 600 ? offsets : [...offsets.slice(0, 400), ...offsets.slice(-200)]
}

function assertBody(
  recorder: Recorder,
  body: Buffer,
  what: string,
  trailers: IncomingHttpHeaders = {},
): void {
  assert.deepEqual(recorder.errors, [], what)
  assert.equal(recorder.heads.length, 1, `${what}: one head`)
  assert.equal(recorder.heads[0]?.status, 200, what)
  assert.equal(recorder.ends.length, 1, `${what}: one end`)
  assert.deepEqual({ ...recorder.ends[0] }, trailers, `${what}: trailers`)
  assert.ok(Buffer.concat(recorder.body).equals(body), `${what}: the body bytes, exactly`)
}

test('every recording, every framing, one byte per read and split at the framing offsets: the body exactly, one end', () => {
  for (const { name, body } of BODIES) {
    for (const { name: framing, framed, closeEnds: close, trailers } of everyFraming(body)) {
      assertBody(parse([framed.bytes], close), body, `${name} ${framing}: whole`, trailers)
      assertBody(parse(fixedPieces(framed.bytes, 1), close), body, `${name} ${framing}: bytewise`, trailers)
      for (const offset of sampledOffsets(framed.framingOffsets)) {
        const reads = [framed.bytes.subarray(0, offset), framed.bytes.subarray(offset)]
        checkSplit(reads, close, body, trailers, `${name} ${framing}: at ${offset}`)
      }
    }
  }
})

test('three-piece splits around each chunk line of a short stream', () => {
  const body = readFileSync(`${SSE_FIXTURE_DIR}mockllm_chat_char_chunks.sse`)
  const framed = chunked(fixedPieces(body, 23), { extension: true, trailer: true })
  const offsets = framed.framingOffsets
  for (const first of offsets)
    for (const second of offsets)
      if (second > first && second - first < 12)
        assertBody(parse(splitAt(framed.bytes, [first, second])), body, `at ${first},${second}`, {
          'x-trailer': 'done',
        })
})

test('the body is handed on as views of the reads, never copied', () => {
  const read = Buffer.from(
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n',
  )
  const views: Buffer[] = []
  const parser = new ResponseParser({
    onHead() {},
    onBody: (bytes) => views.push(bytes),
    onEnd() {},
    onParseError: (error) => assert.fail(error),
  })
  parser.push(read)
  assert.deepEqual(
    views.map((view) => view.toString()),
    ['hello', 'abc'],
  )
  // A view lies inside the read's own bytes. (Sharing .buffer is not enough: small Buffers, copies
  // included, come from one shared pool.)
  for (const view of views) {
    assert.equal(view.buffer, read.buffer)
    assert.ok(
      view.byteOffset >= read.byteOffset && view.byteOffset + view.length <= read.byteOffset + read.length,
    )
    assert.equal(view[0], read[view.byteOffset - read.byteOffset])
  }
  const first = views[0] as Buffer
  read[first.byteOffset - read.byteOffset] = 0x48 // 'H': a view sees a change to the read
  assert.equal(first.toString(), 'Hello')
})

test('head: status text, repeated fields as lists, lower-case names, bare LF line ends', () => {
  const recorder = parseText(
    'HTTP/1.1 429 Too Many Requests\nRetry-After: 1\nSet-Cookie: a=1\nset-cookie: b=2\ncontent-length: 2\n\nhi',
  )
  assert.deepEqual(recorder.errors, [])
  assert.equal(recorder.heads[0]?.status, 429)
  assert.equal(recorder.heads[0]?.text, 'Too Many Requests')
  assert.deepEqual(recorder.heads[0]?.headers['set-cookie'], ['a=1', 'b=2'])
  assert.equal(recorder.heads[0]?.headers['retry-after'], '1')
  assert.equal(Buffer.concat(recorder.body).toString(), 'hi')
  assert.equal(recorder.ends.length, 1)
})

test('fields named like members of Object.prototype are fields like any other, headers and trailers', () => {
  const recorder = parseText(
    'HTTP/1.1 200 OK\r\n__proto__: a\r\nConstructor: b\r\nconstructor: c\r\ntransfer-encoding: chunked\r\n\r\n' +
      '2\r\nhi\r\n0\r\n__proto__: t\r\n\r\n',
  )
  assert.deepEqual(recorder.errors, [])
  const headers = recorder.heads[0]?.headers as IncomingHttpHeaders
  // On a plain object the first `__proto__` field made the object's prototype an array.
  assert.equal(Object.getPrototypeOf(headers), null)
  assert.deepEqual(Object.entries(headers), [
    ['__proto__', 'a'],
    ['constructor', ['b', 'c']],
    ['transfer-encoding', 'chunked'],
  ])
  assert.equal((headers as { length?: unknown }).length, undefined)
  assert.equal(Buffer.concat(recorder.body).toString(), 'hi')
  const trailers = recorder.ends[0] as IncomingHttpHeaders
  assert.equal(Object.getPrototypeOf(trailers), null)
  assert.deepEqual(Object.entries(trailers), [['__proto__', 't']])
})

test('only spaces and tabs around a value are white space: a value keeps its NBSP (obs-text), as llhttp does', () => {
  const recorder = parseText('HTTP/1.1 200 OK\r\nx-a: \t\xa0a\xa0 \t\r\ncontent-length: 2\r\n\r\nhi')
  assert.deepEqual(recorder.errors, [])
  assert.equal(recorder.heads[0]?.headers['x-a'], '\xa0a\xa0')
  // An NBSP after a length or a connection option is not white space either.
  assert.match(
    parseText('HTTP/1.1 200 OK\r\ncontent-length: 2\xa0\r\n\r\nhi').errors[0]?.message ?? '',
    /bad content-length/,
  )
  const closing = new ResponseParser(new Recorder())
  closing.push(Buffer.from('HTTP/1.1 200 OK\r\nconnection: close\xa0\r\ncontent-length: 0\r\n\r\n', 'latin1'))
  assert.equal(closing.closeAfter, false)
})

test('1xx interim responses are skipped; the final head is the one handed on', () => {
  const recorder = parseText(
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc',
  )
  assert.deepEqual(recorder.errors, [])
  assert.deepEqual(
    recorder.heads.map((head) => head.status),
    [200],
  )
  assert.equal(Buffer.concat(recorder.body).toString(), 'abc')
})

test('responses without a body end with their head: 204, 304, content-length 0', () => {
  for (const text of [
    'HTTP/1.1 204 No Content\r\n\r\n',
    'HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
  ]) {
    const recorder = parseText(text)
    assert.deepEqual(recorder.errors, [], text)
    assert.equal(recorder.ends.length, 1, text)
    assert.equal(recorder.body.length, 0, text)
  }
})

test('whether the connection may carry another request', () => {
  const cases: [string, boolean][] = [
    ['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.1 200 OK\r\nconnection: keep-alive, close\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n', false],
    // Transfer-Encoding beside Content-Length: chunked wins, the connection is not reused.
    ['HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', true],
  ]
  for (const [text, closeAfter] of cases) {
    const recorder = new Recorder()
    const parser = new ResponseParser(recorder)
    parser.push(Buffer.from(text))
    assert.deepEqual(recorder.errors, [], text)
    assert.equal(recorder.ends.length, 1, text)
    assert.equal(parser.closeAfter, closeAfter, text)
  }
})

test('a transfer coding other than chunked last is read to the close', () => {
  const recorder = parseText('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nabc', true)
  assert.deepEqual(recorder.errors, [])
  assert.equal(Buffer.concat(recorder.body).toString(), 'abc')
  assert.equal(recorder.ends.length, 1)
})

/** Malformed responses: each is an error with these words, and never an end. */
const MALFORMED: [string, string, RegExp][] = [
  ['not HTTP at all', 'SSH-2.0-OpenSSH_9.6\r\n\r\n', /bad status line/],
  ['HTTP/2 status line', 'HTTP/2 200 OK\r\n\r\n', /bad status line/],
  ['two-digit status', 'HTTP/1.1 20 OK\r\n\r\n', /bad status line/],
  ['status 000', 'HTTP/1.1 000 Nothing\r\n\r\n', /bad status code/],
  ['101 unasked', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
  ['a header without a colon', 'HTTP/1.1 200 OK\r\nbroken header\r\n\r\n', /bad header line/],
  ['space before the colon', 'HTTP/1.1 200 OK\r\ncontent-length : 1\r\n\r\na', /bad header line/],
  ['obs-fold', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n  continued\r\ncontent-length: 0\r\n\r\n', /bad header line/],
  [
    'a NUL in a value',
    'HTTP/1.1 200 OK\r\nx-a: a\0b\r\ncontent-length: 0\r\n\r\n',
    /bad value of header x-a/,
  ],
  // A vertical tab or form feed is a control character, not white space to trim (llhttp rejects it).
  [
    'a vertical tab before a value',
    'HTTP/1.1 200 OK\r\nx-a: \x0ba\r\ncontent-length: 0\r\n\r\n',
    /bad value of header x-a/,
  ],
  [
    'a form feed after a value',
    'HTTP/1.1 200 OK\r\nx-a: a\x0c\r\ncontent-length: 0\r\n\r\n',
    /bad value of header x-a/,
  ],
  ['content-length not a number', 'HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\n', /bad content-length/],
  ['negative content-length', 'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /bad content-length/],
  [
    'two different content-lengths',
    'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd',
    /bad content-length/,
  ],
  [
    'bad chunk size',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n',
    /bad chunk size/,
  ],
  [
    'empty chunk size',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\r\nab\r\n0\r\n\r\n',
    /bad chunk size \(byte 0x0d\)/,
  ],
  [
    'empty chunk size, bare LF',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\nab\r\n0\r\n\r\n',
    /without a size/,
  ],
  [
    'a sign before the size',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n+2\r\nab\r\n0\r\n\r\n',
    /bad chunk size/,
  ],
  [
    'chunk size too large',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffff\r\n',
    /too large/,
  ],
  [
    'CR then not LF in a size line',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\rab\r\n0\r\n\r\n',
    /CR without LF/,
  ],
  [
    'chunk data longer than its size',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n',
    /longer than its size/,
  ],
  [
    'two CRs after chunk data',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\r\n0\r\n\r\n',
    /longer than its size/,
  ],
  [
    'a bad trailer',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nnot a field\r\n\r\n',
    /bad header line/,
  ],
  [
    'garbage after a chunked end',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nHTTP/1.1',
    /after the end/,
  ],
  [
    'garbage after a content-length end',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nabXYZ',
    /after the end/,
  ],
  ['garbage after a body-less end', 'HTTP/1.1 204 No Content\r\n\r\nxyz', /after the end/],
]

test('malformed responses are errors, whole and split at every byte; never an end', () => {
  for (const [what, text, message] of MALFORMED) {
    const bytes = Buffer.from(text, 'latin1')
    const splits = [
      [bytes],
      fixedPieces(bytes, 1),
      ...Array.from({ length: bytes.length - 1 }, (_, i) => splitAt(bytes, [i + 1])),
    ]
    for (const reads of splits) {
      const recorder = parse(reads)
      assert.equal(
        recorder.errors.length,
        1,
        `${what} in ${reads.length} reads: ${recorder.errors.length} errors`,
      )
      assert.match(recorder.errors[0]?.message ?? '', message, what)
      assert.equal(recorder.errors[0]?.code, 'LLMBENCH_HTTP_MALFORMED')
      // Garbage after the end: the response is not reported complete when it came in the same read.
      if (reads.length === 1) assert.equal(recorder.ends.length, 0, `${what}: no end`)
    }
  }
})

test('after an error or a halt, nothing more reaches the sink', () => {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'))
  parser.push(Buffer.from('2\r\nab\r\n0\r\n\r\n'))
  assert.equal(recorder.errors.length, 1)
  assert.equal(recorder.body.length, 0)
  assert.equal(recorder.ends.length, 0)
  const halted = new Recorder()
  const other = new ResponseParser(halted)
  other.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab'))
  other.halt()
  other.push(Buffer.from('cd'))
  assert.equal(Buffer.concat(halted.body).toString(), 'ab')
  assert.equal(halted.ends.length, 0)
})

test('a body cut by the close: a close-delimited body ends, any other is cut', () => {
  const cut = [
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello',
    'HTTP/1.1 200 OK\r\ncontent-le',
  ]
  for (const text of cut) {
    const recorder = new Recorder()
    const parser = new ResponseParser(recorder)
    parser.push(Buffer.from(text))
    assert.equal(parser.endOfInput(), false, text)
    assert.equal(parser.midResponse, true, text)
    assert.equal(recorder.ends.length, 0, text)
  }
  const idle = new ResponseParser(new Recorder())
  assert.equal(idle.midResponse, false, 'no response begun: not cut')
})

test('the head is bounded: a server that never ends its headers is an error at the limit, not a growing buffer', () => {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\n'))
  const line = Buffer.from(`x-filler: ${'a'.repeat(1000)}\r\n`)
  let pushed = 0
  // Bounded loop: twice the limit at most.
  while (recorder.errors.length === 0 && pushed < 2 * MAX_HEAD_BYTES) {
    parser.push(line)
    pushed += line.length
  }
  assert.equal(recorder.errors.length, 1)
  assert.match(recorder.errors[0]?.message ?? '', /header section over/)
  assert.ok(pushed <= MAX_HEAD_BYTES + line.length, `error after ${pushed} bytes`)
  assert.equal(recorder.heads.length, 0)
})

test('the trailers are bounded too', () => {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n'))
  const line = Buffer.from(`x-t: ${'b'.repeat(1000)}\r\n`)
  for (let i = 0; i < 2 * (MAX_HEAD_BYTES / 1000) && recorder.errors.length === 0; i++) parser.push(line)
  assert.match(recorder.errors[0]?.message ?? '', /trailer section over/)
  assert.equal(recorder.ends.length, 0)
})

test('a chunk-size line is bounded: a size padded with extensions past the limit is an error', () => {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;'))
  for (let i = 0; i < MAX_CHUNK_LINE_BYTES && recorder.errors.length === 0; i++) parser.push(Buffer.from('x'))
  assert.match(recorder.errors[0]?.message ?? '', /chunk-size line over/)
  // Leading zeros are digits too: they cannot hide a line longer than the limit.
  const zeros = parseText(
    `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${'0'.repeat(20)}1\r\na\r\n0\r\n\r\n`,
  )
  assert.match(zeros.errors[0]?.message ?? '', /too large/)
})

test('a parser is reused for the next response on the same connection', () => {
  const recorder = new Recorder()
  const parser = new ResponseParser(recorder)
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na'))
  assert.equal(parser.done, true)
  parser.push(Buffer.from('x'))
  assert.match(recorder.errors[0]?.message ?? '', /after the end/, 'a byte between responses is garbage')
  parser.reset()
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n'))
  assert.equal(recorder.ends.length, 2)
  assert.equal(Buffer.concat(recorder.body).toString(), 'ab')
})
