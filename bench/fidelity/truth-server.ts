/**
 * The ground-truth streaming server of the fidelity benchmark, run as its own process:
 *   node --import tsx bench/fidelity/truth-server.ts PORT FIRST_TOKEN_MS GAP_MS TOKENS
 * Every POST streams TOKENS OpenAI-style chat chunks: the first FIRST_TOKEN_MS after the request
 * arrived, then one every GAP_MS (absolute deadlines, so timer lateness does not accumulate), then a
 * usage chunk and [DONE]. It records, per request, when it really wrote the first token chunk
 * relative to when the request arrived: the true TTFT, which a client can only add to.
 * GET /stats returns {ttft_ms: [...], loop_delay_p99_ms} and resets them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

const [port, firstTokenMs, gapMs, tokens] = process.argv.slice(2).map(Number) as [
  number,
  number,
  number,
  number,
]
const CHUNK_PREFIX =
  'data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{"content":"'
const CHUNK_SUFFIX = '"},"finish_reason":null}]}\n\n'
const TOKEN_CHUNK = `${CHUNK_PREFIX} tok${CHUNK_SUFFIX}`
const END =
  'data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n' +
  `data: {"id":"chatcmpl-truth","object":"chat.completion.chunk","created":0,"model":"truth","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":${tokens},"total_tokens":${tokens + 8}}}\n\n` +
  'data: [DONE]\n\n'

let trueTtfts: number[] = []
const loopDelay = monitorEventLoopDelay({ resolution: 5 })
loopDelay.enable()

function stream(res: ServerResponse, arrivedAt: number): void {
  let sent = 0
  let due = arrivedAt + firstTokenMs
  let timer: NodeJS.Timeout | null = null
  const tick = (): void => {
    if (res.destroyed) return
    res.write(TOKEN_CHUNK)
    if (sent === 0) trueTtfts.push(performance.now() - arrivedAt)
    sent++
    if (sent >= tokens) {
      res.end(END)
      return
    }
    due += gapMs
    timer = setTimeout(tick, Math.max(0, due - performance.now()))
  }
  timer = setTimeout(tick, Math.max(0, due - performance.now()))
  res.on('close', () => {
    if (timer !== null) clearTimeout(timer)
  })
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const arrivedAt = performance.now()
  if (req.method === 'GET') {
    const body = JSON.stringify({
      ttft_ms: trueTtfts,
      loop_delay_p99_ms: Math.max(0, loopDelay.percentile(99) / 1e6 - 5),
    })
    trueTtfts = []
    loopDelay.reset()
    res.writeHead(200, { 'content-type': 'application/json' }).end(body)
    return
  }
  req.resume()
  req.on('end', () => {
    res.socket?.setNoDelay(true)
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.flushHeaders()
    stream(res, arrivedAt)
  })
})
server.keepAliveTimeout = 60_000
server.headersTimeout = 65_000
server.maxRequestsPerSocket = 0
server.listen(port, '127.0.0.1', () => process.stdout.write(`ready ${port}\n`))
process.on('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
