/**
 * The request loop of the floor's twins (undici-floor-client.mjs, h1-floor-client.mjs): STREAMS
 * streams send REQUESTS streamed chat requests in all through `dispatcher` (undici's dispatch API),
 * with a handler that only stamps reads, then `dispatcher` is closed.
 */
import { performance } from 'node:perf_hooks'

/** The streamed chat request every bench:cost Node client sends. */
export const BODY = Buffer.from(
  JSON.stringify({
    model: 'truth',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 64,
    stream: true,
  }),
)
const HEADERS = { 'content-type': 'application/json' }

export function sendStampedRequests(dispatcher, origin, streams, requests, close) {
  let started = 0
  let finished = 0
  const send = () => {
    if (started >= requests) return
    started++
    const stamps = [performance.now()]
    dispatcher.dispatch(
      { origin, path: '/v1/chat/completions', method: 'POST', headers: HEADERS, body: BODY },
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
            close()
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
}
