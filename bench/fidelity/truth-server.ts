/**
 * The ground-truth streaming server of the fidelity benchmark, run as its own process:
 *   node --import tsx bench/fidelity/truth-server.ts PORT FIRST_TOKEN_MS GAP_MS TOKENS
 * Every POST streams TOKENS OpenAI-style chat chunks: the first FIRST_TOKEN_MS after the request
 * arrived, then one every GAP_MS (absolute deadlines, so timer lateness does not accumulate), then a
 * usage chunk and [DONE]. It records, per request, when it really wrote the first token chunk
 * relative to when the request's bytes were read: the true TTFT, which a client can only add to.
 * GET /stats returns {ttft_ms: [...], events, loop_delay_p99_ms} and resets them; GET /open, the
 * streams begun and not yet ended.
 *
 * It speaks HTTP/1.1 on a raw `net` socket with pre-built chunked frames: at 1024 streams of
 * 50 tokens/s (51k writes/s) node:http's per-write overhead made the server, not the client, the
 * larger source of error on a 2-core machine.
 */
import { createServer, type Socket } from 'node:net'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

const [port, firstTokenMs, gapMs, tokens] = process.argv.slice(2).map(Number) as [
  number,
  number,
  number,
  number,
]

/** One HTTP/1.1 chunked-encoding frame holding `text`. */
function frame(text: string): Buffer {
  const body = Buffer.from(text)
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')])
}

const HEADERS = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n' +
    'connection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n',
)
const TOKEN_FRAME = frame(
  'data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]}\n\n',
)
const END_FRAMES = Buffer.concat([
  frame(
    'data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n' +
      `data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":${tokens},"total_tokens":${tokens + 8}}}\n\n` +
      'data: [DONE]\n\n',
  ),
  Buffer.from('0\r\n\r\n'),
])

let trueTtfts: number[] = []
/** Streams begun and not yet ended (GET /open): bench/cost/run.ts samples a client's memory while they are. */
let open = 0
/** Token chunks written since the last /stats: the event count bench/cost/run.ts divides CPU by. */
let events = 0
const loopDelay = monitorEventLoopDelay({ resolution: 5 })
loopDelay.enable()

function stream(socket: Socket, arrivedAt: number): void {
  socket.write(HEADERS)
  open++
  let sent = 0
  let due = arrivedAt + firstTokenMs
  const tick = (): void => {
    if (socket.destroyed) {
      open--
      return
    }
    socket.write(TOKEN_FRAME)
    events++
    if (sent === 0) trueTtfts.push(performance.now() - arrivedAt)
    sent++
    if (sent >= tokens) {
      socket.write(END_FRAMES)
      open--
      return
    }
    due += gapMs
    setTimeout(tick, Math.max(0, due - performance.now()))
  }
  setTimeout(tick, Math.max(0, due - performance.now()))
}

function stats(socket: Socket): void {
  const body = JSON.stringify({
    ttft_ms: trueTtfts,
    events,
    loop_delay_p99_ms: Math.max(0, loopDelay.percentile(99) / 1e6 - 5),
  })
  trueTtfts = []
  events = 0
  loopDelay.reset()
  socket.write(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  )
  socket.end()
}

function openStreams(socket: Socket): void {
  const body = JSON.stringify({ open })
  socket.end(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
  )
}

/** Reads requests off a keep-alive connection: head up to CRLFCRLF, then content-length bytes. */
function serve(socket: Socket): void {
  socket.setNoDelay(true)
  let pending: Buffer = Buffer.alloc(0)
  socket.on('data', (data: Buffer) => {
    const arrivedAt = performance.now()
    pending = pending.length === 0 ? data : Buffer.concat([pending, data])
    for (;;) {
      const headEnd = pending.indexOf('\r\n\r\n')
      if (headEnd === -1) return
      const head = pending.subarray(0, headEnd).toString('latin1')
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0)
      if (pending.length < headEnd + 4 + length) return
      pending = pending.subarray(headEnd + 4 + length)
      if (head.startsWith('GET /open')) openStreams(socket)
      else if (head.startsWith('GET')) stats(socket)
      else stream(socket, arrivedAt)
    }
  })
  socket.on('error', () => socket.destroy())
}

const server = createServer(serve)
server.listen(port, '127.0.0.1', () => process.stdout.write(`ready ${port}\n`))
process.on('SIGTERM', () => process.exit(0))
