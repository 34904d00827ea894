/**
 * The floor of bench:cost: the least a streaming client can do on raw `node:net`. Each of STREAMS
 * keep-alive connections sends a streamed chat request, stamps every read with performance.now()
 * (kept, as a client keeps its token times) and finds the end of the chunked body (the last read
 * ends with the zero-size chunk), then sends the next, until REQUESTS have finished in all.
 * No HTTP parsing, no SSE parsing, no JSON: what is left is the cost of Node's sockets and timers.
 *
 *   node bench/cost/floor-client.mjs PORT STREAMS REQUESTS
 * Plain JavaScript so that no loader (tsx) is counted in its CPU or memory.
 */
import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const body = JSON.stringify({
  model: 'truth',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 64,
  stream: true,
})
const request = Buffer.from(
  `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
)
const END = Buffer.from('0\r\n\r\n')
let started = 0
let finished = 0
let reads = 0

function stream() {
  const socket = connect(port, '127.0.0.1')
  socket.setNoDelay(true)
  let stamps = []
  const next = () => {
    if (started >= requests) {
      socket.end()
      return
    }
    started++
    stamps = [performance.now()]
    socket.write(request)
  }
  socket.on('data', (chunk) => {
    stamps.push(performance.now())
    reads++
    if (chunk.length >= END.length && chunk.subarray(chunk.length - END.length).equals(END)) {
      finished++
      if (finished === requests) process.stdout.write(`${JSON.stringify({ requests: finished, reads })}\n`)
      next()
    }
  })
  socket.on('error', (error) => {
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  })
  socket.once('connect', next)
}

for (let i = 0; i < Math.min(streams, requests); i++) stream()
