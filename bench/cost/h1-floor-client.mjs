/**
 * The floor's twin on the h1 client (src/client/h1/, built to dist/ by `npm run bench:cost`): the
 * same STREAMS keep-alive streams and REQUESTS as floor-client.mjs and undici-floor-client.mjs,
 * through an H1Pool (what llmbench's streaming requests use) with a handler that only stamps reads.
 * Its distance to the floor is what the HTTP layer costs per event; to the undici row, what the
 * purpose-built client saves.
 *
 *   node bench/cost/h1-floor-client.mjs PORT STREAMS REQUESTS
 */
import { performance } from 'node:perf_hooks'
import { H1Pool } from '../../dist/client/h1/pool.js'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const body = Buffer.from(
  JSON.stringify({
    model: 'truth',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 64,
    stream: true,
  }),
)
const origin = `http://127.0.0.1:${port}`
const client = new H1Pool(origin, { connections: streams })
const headers = { 'content-type': 'application/json' }
let started = 0
let finished = 0

function send() {
  if (started >= requests) return
  started++
  const stamps = [performance.now()]
  client.dispatch(
    { origin, path: '/v1/chat/completions', method: 'POST', headers, body },
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
          client.destroy()
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
