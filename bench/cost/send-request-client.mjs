/**
 * llmbench's streaming client alone: the same STREAMS keep-alive streams and REQUESTS as
 * floor-client.mjs, each sent with the client a run's worker threads use (dist/client: openTarget's
 * connection pool and sendRequest, which times every read, parses the SSE events and chunks and
 * builds the request's record), on this one thread, with nothing after: no worker hand-off, no
 * token counting, no records written, no summaries, no report.
 *
 * A diagnostic row of bench:cost. Its distance to the floor is the client's own per-event cost (HTTP,
 * SSE, chunks, records); llmbench's distance to it is the run around the client (worker threads,
 * the main thread's tokenizer cross-check, requests.jsonl, summaries, charts).
 *
 *   node bench/cost/send-request-client.mjs PORT STREAMS REQUESTS   (after npm run build)
 */

import { sendRequest } from '../../dist/client/stream-client.js'
import { closeTarget, openTarget } from '../../dist/client/target.js'
import { loadRunConfig } from '../../dist/config/load.js'
import { resolveEndpoint } from '../../dist/run/setup/resolve-endpoint.js'
import { BODY as body } from './stamped-requests.mjs'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const origin = `http://127.0.0.1:${port}`
// The endpoint as a run resolves it (headers, timeouts, protocol): the requests llmbench sends.
const config = loadRunConfig({ configFiles: [], flags: { base_url: `${origin}/v1`, model: 'truth' } })
const target = openTarget(resolveEndpoint(config, null), streams)
let started = 0
let finished = 0
let failed = 0

async function loop() {
  while (started < requests) {
    const seq = started++
    const record = await sendRequest(target, {
      seq,
      worker: 0,
      level: streams,
      phase: 'measure',
      prompt_id: seq,
      scheduled_at: null,
      attempt: 1,
      body,
    })
    finished++
    if (record.error !== null) failed++
  }
}

await Promise.all(Array.from({ length: Math.min(streams, requests) }, loop))
if (failed > 0) {
  process.stderr.write(`${failed} of ${finished} requests failed\n`)
  process.exit(1)
}
process.stdout.write(`${JSON.stringify({ requests: finished })}\n`)
await closeTarget(target)
