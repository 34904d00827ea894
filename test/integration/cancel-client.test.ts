/**
 * --cancel-share at the client: a request planned to be cancelled is aborted by closing its
 * connection once its tokens arrived, settles as cancelled (neither a success nor a failure), and
 * leaves no connection behind; the simulator frees the slot, unless it plays a leaking server.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { H1Pool } from '../../src/client/h1/pool.js'
import { sendRequest } from '../../src/client/stream-client.js'
import { isOk } from '../../src/metrics/derive.js'
import { startSimulator } from '../../src/sim/server.js'
import { measurePlan, streamTarget } from '../helpers/request-plan.js'
import { waitUntil } from '../helpers/wait.js'

const BODY = Buffer.from(
  JSON.stringify({
    model: 'llmbench-sim',
    stream: true,
    max_tokens: 400,
    messages: [{ role: 'user', content: 'hello' }],
  }),
)

async function cancelOne(afterEvents: number, ignoreDisconnect: boolean) {
  // 400 tokens at 10 ms each: the whole reply takes seconds, the cancel comes long before it.
  const sim = await startSimulator({
    slots: 2,
    decode_base_ms: 10,
    decode_ms_per_seq: 0,
    prefill_base_ms: 1,
    quirks: { ignore_disconnect: ignoreDisconnect },
  })
  const origin = new URL(sim.url).origin
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const record = await sendRequest(streamTarget(pool, origin), {
      ...measurePlan(BODY),
      cancel_after_events: afterEvents,
    })
    return { record, sim, pool }
  } catch (error) {
    await pool.destroy()
    await sim.close()
    throw error
  }
}

test('a request cancelled after N events: its own outcome, the connection closed, the slot freed', async () => {
  const { record, sim, pool } = await cancelOne(5, false)
  try {
    assert.deepEqual(record.cancelled, { after_events: 5 })
    assert.equal(record.error, null)
    assert.equal(isOk(record), false, 'a cancelled request is no success')
    assert.equal(record.chunks, 5)
    assert.equal(record.token_times.length, 5)
    assert.equal(record.finish_reason, null)
    assert.equal(record.end_at, record.token_times.at(-1), 'it ends at the token it was cancelled on')
    // The connection is not kept for reuse: it was closed, and the pool forgot it.
    await waitUntil(() => pool.openConnections === 0, 'the cancelled connection to leave the pool')
    await waitUntil(() => sim.stats().running === 0, 'the simulator to free the slot')
    assert.equal(sim.stats().aborted, 1)
    assert.equal(sim.stats().completed, 0)
  } finally {
    await pool.destroy()
    await sim.close()
  }
})

test('cancelled at the first token: TTFT is there, nothing after it', async () => {
  const { record, sim, pool } = await cancelOne(1, false)
  try {
    assert.deepEqual(record.cancelled, { after_events: 1 })
    assert.equal(record.first_token_at, record.end_at)
    assert.equal(record.token_times.length, 1)
  } finally {
    await pool.destroy()
    await sim.close()
  }
})

test('a leaking server keeps the slot after the client closed: the simulator says so', async () => {
  const { record, sim, pool } = await cancelOne(1, true)
  try {
    assert.deepEqual(record.cancelled, { after_events: 1 })
    await waitUntil(() => pool.openConnections === 0, 'the cancelled connection to leave the pool')
    // The client is done; the server still decodes the request it no longer has anyone to send to.
    assert.equal(sim.stats().running, 1)
    assert.equal(sim.stats().aborted, 0)
    await waitUntil(() => sim.stats().completed === 1, 'the leaked request to run to max_tokens')
    assert.equal(sim.stats().running, 0)
  } finally {
    await pool.destroy()
    await sim.close()
  }
})

test('the pool carries a next request after a cancel, on a new connection', async () => {
  const { sim, pool } = await cancelOne(2, false)
  try {
    const origin = new URL(sim.url).origin
    const short = Buffer.from(BODY.toString().replace('"max_tokens":400', '"max_tokens":3'))
    const next = await sendRequest(streamTarget(pool, origin), measurePlan(short))
    assert.equal(next.error, null)
    assert.equal(next.cancelled, undefined)
    assert.equal(next.connection, 'new')
    assert.equal(next.chunks, 3)
  } finally {
    await pool.destroy()
    await sim.close()
  }
})
