/**
 * The h1 client gives the same records whatever the network does to the bytes: every recording of
 * test/fixtures/sse and test/fixtures/protocols, served chunked (one chunk per event; 61-byte chunks
 * with upper-case hex, chunk extensions and a trailer), with a Content-Length and close-delimited,
 * is replayed through the client (H1Pool → connection → parser → the stream client's Exchange) as
 * one read, as one read per byte, and split in two at byte boundaries of the HTTP framing (the raw
 * response bytes, not just the SSE payload). Every record equals the whole read's, but for its
 * timestamps.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { H1Pool } from '../../src/client/h1/pool.js'
import { sendRequest } from '../../src/client/stream-client.js'
import type { Target } from '../../src/client/target.js'
import type { Protocol } from '../../src/protocols/names.js'
import type { RequestRecord } from '../../src/records/types.js'
import {
  chunked,
  closeDelimited,
  everyFraming,
  type FramedResponse,
  fixedPieces,
  sseEvents,
  withLength,
} from '../helpers/http-framing.js'
import { allRecordings, recordContent as content, measurePlan } from '../helpers/recordings.js'
import { replaySocket, splitAt } from '../helpers/replay-socket.js'

/** One request whose response arrives as `reads` (then the connection closes when `end`). */
export async function replay(
  reads: readonly Buffer[],
  protocol: Protocol,
  end = false,
  written?: Buffer[],
): Promise<RequestRecord> {
  const pool = new H1Pool('http://replay.invalid', {
    connections: 1,
    openSocket: () => replaySocket(reads, { end, ...(written === undefined ? {} : { written }) }),
  })
  const target: Target = {
    dispatcher: pool,
    origin: 'http://replay.invalid',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    stream: true,
    protocol,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
  }
  try {
    return await sendRequest(target, measurePlan())
  } finally {
    await pool.destroy()
  }
}

const CASES = allRecordings()

/**
 * Two-piece splits through the whole client at the framing offsets of the head, the first chunks and
 * the last ones (the one-byte reads cover every boundary of every stream at once, and
 * h1-response-parser.test.ts splits the parser's input at every framing offset of every stream).
 */
function splitOffsets(framed: FramedResponse): number[] {
  const offsets = framed.framingOffsets
  if (offsets.length <= 120) return offsets
  return [...offsets.slice(0, 80), ...offsets.slice(-40)]
}

for (const { name: fixture, protocol, body } of CASES) {
  test(`h1 client, every split of the framing gives the whole read's record: ${fixture}`, async () => {
    for (const { name: framing, framed, closeEnds: end } of everyFraming(body)) {
      const whole = content(await replay([framed.bytes], protocol, end))
      assert.equal(whole.status, 200, `${framing}: ${JSON.stringify(whole.error)}`)
      assert.ok(
        !/malformed HTTP|other side closed/.test(
          String((whole.error as { message?: string } | null)?.message),
        ),
      )
      const bytewise = content(await replay(fixedPieces(framed.bytes, 1), protocol, end))
      assert.deepEqual(bytewise, whole, `${framing}: one byte per read`)
      for (const offset of splitOffsets(framed)) {
        const split = content(await replay(splitAt(framed.bytes, [offset]), protocol, end))
        assert.deepEqual(split, whole, `${framing}: split at byte ${offset}`)
      }
    }
  })
}

test('every framing gives the same record: chunked, content-length and close-delimited agree', async () => {
  for (const { name: fixture, protocol, body } of CASES) {
    const records = [
      await replay([chunked(sseEvents(body)).bytes], protocol),
      await replay([withLength(body).bytes], protocol),
      await replay([closeDelimited(body).bytes], protocol, true),
    ].map((record) => content(record))
    // The connection differs ('new' each time, all alike); the rest must too.
    assert.deepEqual(records[1], records[0], `${fixture}: content-length`)
    assert.deepEqual(records[2], records[0], `${fixture}: close-delimited`)
  }
})
