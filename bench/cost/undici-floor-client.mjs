/**
 * The floor's twin on undici: the same STREAMS keep-alive streams and REQUESTS as floor-client.mjs,
 * sent through an undici Pool (the dispatcher llmbench's streaming requests use) with a handler
 * that only stamps reads. No SSE or JSON parsing: its distance to the floor is what the HTTP layer
 * costs per event, and its distance to llmbench is what llmbench's own per-event work costs. That
 * split says how much a purpose-built HTTP/1.1 client could save at most.
 *
 *   node bench/cost/undici-floor-client.mjs PORT STREAMS REQUESTS
 */
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const body = Buffer.from(
  JSON.stringify({
    model: 'truth',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 64,
    stream: true,
  }),
)
const client = new Pool(`http://127.0.0.1:${port}`, { pipelining: 1, connections: streams })
let started = 0
let finished = 0

function send() {
  if (started >= requests) return
  started++
  const stamps = [performance.now()]
  client.dispatch(
    {
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    },
    {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData() {
        stamps.push(performance.now())
      },
      onResponseEnd() {
        finished++
        if (finished === requests) {
          process.stdout.write(`${JSON.stringify({ requests: finished })}\n`)
          client.close()
        } else send()
      },
      onResponseError(_controller, error) {
        process.stderr.write(`${error.message}\n`)
        process.exit(1)
      },
    },
  )
}

for (let i = 0; i < Math.min(streams, requests); i++) send()
