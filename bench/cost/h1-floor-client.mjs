/**
 * The floor's twin on the h1 client (src/client/h1/, built to dist/ by `npm run bench:cost`): the
 * same STREAMS keep-alive streams and REQUESTS as floor-client.mjs and undici-floor-client.mjs,
 * through an H1Pool (what llmbench's streaming requests use) with a handler that only stamps reads.
 * Its distance to the floor is what the HTTP layer costs per event; to the undici row, what the
 * purpose-built client saves.
 *
 *   node bench/cost/h1-floor-client.mjs PORT STREAMS REQUESTS
 */
import { H1Pool } from '../../dist/client/h1/pool.js'
import { sendStampedRequests } from './stamped-requests.mjs'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const origin = `http://127.0.0.1:${port}`
const client = new H1Pool(origin, { connections: streams })
sendStampedRequests(client, origin, streams, requests, () => client.destroy())
