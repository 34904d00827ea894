/**
 * The floor's twin on undici: the same STREAMS keep-alive streams and REQUESTS as floor-client.mjs,
 * sent through an undici Pool (the dispatcher llmbench's streaming requests used before the h1
 * client) with a handler that only stamps reads. No SSE or JSON parsing: its distance to the floor
 * is what undici's HTTP layer costs per event.
 *
 *   node bench/cost/undici-floor-client.mjs PORT STREAMS REQUESTS
 */
import { Pool } from 'undici'
import { sendStampedRequests } from './stamped-requests.mjs'

const [port, streams, requests] = process.argv.slice(2).map(Number)
const origin = `http://127.0.0.1:${port}`
const client = new Pool(origin, { pipelining: 1, connections: streams })
sendStampedRequests(client, origin, streams, requests, () => client.close())
