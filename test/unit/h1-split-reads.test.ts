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
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { H1Pool } from '../../src/client/h1/pool.js'
import { type RequestPlan, sendRequest, type Target } from '../../src/client/stream-client.js'
import type { Protocol } from '../../src/protocol.js'
import type { RequestRecord } from '../../src/records/types.js'
import { PROTOCOL_FIXTURE_DIR, SSE_FIXTURE_DIR } from '../helpers/fixtures.js'
import {
  chunked,
  closeDelimited,
  type FramedResponse,
  fixedPieces,
  sseEvents,
  withLength,
} from '../helpers/http-framing.js'
import { replaySocket, splitAt } from '../helpers/replay-socket.js'

const PLAN: RequestPlan = {
  seq: 0,
  worker: 0,
  level: 1,
  phase: 'measure',
  prompt_id: 0,
  scheduled_at: null,
  attempt: 1,
  body: Buffer.from('{"model":"m"}'),
}

/** How the protocol recordings are read, by their names (see test/fixtures/protocols/README.md). */
function protocolOf(name: string): Protocol {
  if (name.startsWith('anthropic-')) return 'messages'
  if (name.startsWith('openai-responses-')) return 'responses'
  if (name === 'llamacpp_completions.sse') return 'completions'
  return 'chat'
}

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
    return await sendRequest(target, PLAN)
  } finally {
    await pool.destroy()
  }
}

/** A record without its clock readings: what must not depend on how the bytes were split. */
function content(record: RequestRecord): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    if (key.endsWith('_at')) kept[key] = value === null ? null : 'stamped'
    else if (key === 'token_times') kept[key] = (value as number[]).length
    else kept[key] = value
  }
  return kept
}

interface Case {
  fixture: string
  protocol: Protocol
  body: Buffer
}

const CASES: Case[] = [
  ...readdirSync(SSE_FIXTURE_DIR)
    .filter((name) => name.endsWith('.sse'))
    .map((name) => ({
      fixture: `sse/${name}`,
      protocol: 'chat' as Protocol,
      body: readFileSync(SSE_FIXTURE_DIR + name),
    })),
  ...readdirSync(PROTOCOL_FIXTURE_DIR)
    .filter((name) => name.endsWith('.sse'))
    .map((name) => ({
      fixture: `protocols/${name}`,
      protocol: protocolOf(name),
      body: readFileSync(PROTOCOL_FIXTURE_DIR + name),
    })),
]

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

for (const { fixture, protocol, body } of CASES) {
  test(`h1 client, every split of the framing gives the whole read's record: ${fixture}`, async () => {
    const framings: [string, FramedResponse, boolean][] = [
      ['chunked, a chunk per event', chunked(sseEvents(body)), false],
      [
        'chunked, 61-byte chunks, upper-case hex, extensions, a trailer',
        chunked(fixedPieces(body, 61), { upperHex: true, extension: true, trailer: true }),
        false,
      ],
      ['content-length', withLength(body), false],
      ['close-delimited', closeDelimited(body), true],
    ]
    for (const [framing, framed, end] of framings) {
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
  for (const { fixture, protocol, body } of CASES) {
    const records = [
      await replay([chunked(sseEvents(body)).bytes], protocol),
      await replay([withLength(body).bytes], protocol),
      await replay([closeDelimited(body).bytes], protocol, true),
    ].map(content)
    // The connection differs ('new' each time, all alike); the rest must too.
    assert.deepEqual(records[1], records[0], `${fixture}: content-length`)
    assert.deepEqual(records[2], records[0], `${fixture}: close-delimited`)
  }
})
