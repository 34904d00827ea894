/**
 * HTTP/1.1 response parsing for the streaming path, side by side in one run (a shared machine:
 * read the ratios): the h1 client's hand-written ResponseParser (src/client/h1/response-parser.ts)
 * against Node's own llhttp binding, the `HTTPParser` that node:_http_common exposes and node:http
 * uses. Both get the same bytes: a chunked event stream (every recording's events one chunk each,
 * as a streaming server writes them), fed
 *   - one chunk per read (a token at a time: the streaming case that matters);
 *   - in 97-byte reads (chunk framing split across reads);
 *   - the whole response in one read.
 * Each sink only counts body bytes, so what is timed is framing and the call into the sink.
 * Rounds alternate between the contestants so drift hits both alike.
 *
 * Run: npm run bench:h1
 */
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { ResponseParser, type ResponseSink } from '../src/client/h1/response-parser.js'
import { readSseFixture } from '../test/helpers/fixtures.js'

interface LlhttpParser {
  initialize(type: number, resource: object, maxHeaderSize?: number, lenient?: number): void
  execute(data: Buffer): number | Error
  [key: number]: unknown
}
interface LlhttpConstructor {
  new (): LlhttpParser
  RESPONSE: number
  kOnHeadersComplete: number
  kOnBody: number
  kOnMessageComplete: number
  kOnExecute: number
}

const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser: LlhttpConstructor }

const STREAM = readSseFixture('openai_gpt4o_long_text.sse')
/** One chunk per SSE event (each ends with a blank line), as a server flushes them. */
function chunkedResponse(): { whole: Buffer; perChunk: Buffer[] } {
  const events = STREAM.toString('utf8').split(/(?<=\n\n)/)
  const head = Buffer.from(
    'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n' +
      'date: Thu, 03 Dec 2026 18:00:00 GMT\r\ntransfer-encoding: chunked\r\n\r\n',
  )
  const chunks = events.map((event) => {
    const bytes = Buffer.from(event)
    return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
  })
  const last = Buffer.from('0\r\n\r\n')
  // The head comes with the first event; the end with the last (as servers write them).
  const perChunk = [Buffer.concat([head, chunks[0] as Buffer]), ...chunks.slice(1, -1)]
  perChunk.push(Buffer.concat([chunks.at(-1) as Buffer, last]))
  return { whole: Buffer.concat(perChunk), perChunk }
}

const { whole, perChunk } = chunkedResponse()
const SPLIT: Buffer[] = []
for (let offset = 0; offset < whole.length; offset += 97) SPLIT.push(whole.subarray(offset, offset + 97))
const SHAPES: [string, Buffer[]][] = [
  ['one chunk per read', perChunk],
  ['97-byte reads', SPLIT],
  ['whole response in one read', [whole]],
]
const RESPONSES_PER_ROUND = 300
const ROUNDS = 9

let bodyBytes = 0
let ends = 0

class CountingSink implements ResponseSink {
  onHead(): void {}
  onBody(bytes: Buffer): void {
    bodyBytes += bytes.length
  }
  onEnd(): void {
    ends++
  }
  onParseError(error: Error): void {
    throw error
  }
}

function handWritten(reads: Buffer[]): void {
  const parser = new ResponseParser(new CountingSink())
  for (let response = 0; response < RESPONSES_PER_ROUND; response++) {
    parser.reset()
    for (const read of reads) parser.push(read)
  }
}

function llhttp(reads: Buffer[]): void {
  const parser = new HTTPParser()
  parser.initialize(HTTPParser.RESPONSE, {})
  parser[HTTPParser.kOnHeadersComplete] = () => 0
  parser[HTTPParser.kOnBody] = (bytes: Buffer) => {
    bodyBytes += bytes.length
  }
  parser[HTTPParser.kOnMessageComplete] = () => {
    ends++
  }
  for (let response = 0; response < RESPONSES_PER_ROUND; response++) {
    for (const read of reads) {
      const result = parser.execute(read)
      if (result instanceof Error) throw result
    }
  }
}

function timeOne(run: (reads: Buffer[]) => void, reads: Buffer[]): number {
  const start = performance.now()
  run(reads)
  return ((performance.now() - start) * 1e6) / (RESPONSES_PER_ROUND * reads.length)
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

console.log(`HTTP/1.1 response parsing, ${perChunk.length} chunks per response, Node ${process.version}`)
console.log('| reads | hand-written ns/read | llhttp ns/read | llhttp / hand-written |')
console.log('|---|---:|---:|---:|')
for (const [name, reads] of SHAPES) {
  // Warm both up (JIT) before timing.
  handWritten(reads)
  llhttp(reads)
  const ours: number[] = []
  const theirs: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    ours.push(timeOne(handWritten, reads))
    theirs.push(timeOne(llhttp, reads))
  }
  const a = median(ours)
  const b = median(theirs)
  console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)}x |`)
}
if (ends === 0 || bodyBytes === 0) throw new Error('no response parsed')
