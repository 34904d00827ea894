/**
 * The h1 client's connection and pool with a socket that replays chosen reads (no network): what
 * it writes, and how every broken response ends as a classified record, never a crash or a hang.
 */
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { Duplex } from 'node:stream'
import { test } from 'node:test'
import { H1Pool } from '../../src/client/h1/pool.js'
import { sendRequest } from '../../src/client/stream-client.js'
import type { Target } from '../../src/client/target.js'
import type { RequestRecord } from '../../src/records/types.js'
import { fixedPieces } from '../helpers/http-framing.js'
import { measurePlan } from '../helpers/recordings.js'
import { replaySocket, scriptedSocket } from '../helpers/replay-socket.js'
import { waitUntil } from '../helpers/wait.js'

const PLAN = measurePlan(Buffer.from('{"model":"m","stream":true}'))

function targetOf(pool: H1Pool, extra: Partial<Target> = {}): Target {
  return {
    dispatcher: pool,
    origin: pool.origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-secret-key-123456' },
    stream: true,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: ['sk-secret-key-123456'],
    ...extra,
  }
}

async function replayText(
  text: string,
  options: { end?: boolean; reads?: 'whole' | 'bytes'; written?: Buffer[] } = {},
): Promise<RequestRecord> {
  const bytes = Buffer.from(text, 'latin1')
  const reads = options.reads === 'bytes' ? fixedPieces(bytes, 1) : [bytes]
  const pool = new H1Pool('http://127.0.0.1:8000', {
    connections: 1,
    openSocket: () =>
      replaySocket(reads, {
        end: options.end ?? false,
        ...(options.written === undefined ? {} : { written: options.written }),
      }),
  })
  try {
    return await sendRequest(targetOf(pool), PLAN)
  } finally {
    await pool.destroy()
  }
}

const EVENT = 'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
const DONE = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n'
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`

test('the request as written: host, the caller headers, keep-alive framing, the body', async () => {
  const written: Buffer[] = []
  const record = await replayText(`${SSE_HEAD}${chunk(EVENT)}${chunk(DONE)}0\r\n\r\n`, { written })
  assert.equal(record.error, null)
  assert.equal(record.chunks, 1)
  const request = Buffer.concat(written).toString('latin1')
  const [head, body] = request.split('\r\n\r\n')
  const lines = head?.split('\r\n') ?? []
  assert.equal(lines[0], 'POST /v1/chat/completions HTTP/1.1')
  assert.ok(lines.includes('host: 127.0.0.1:8000'), head)
  assert.ok(lines.includes('content-type: application/json'), head)
  assert.ok(lines.includes('authorization: Bearer sk-secret-key-123456'), head)
  assert.ok(lines.includes('connection: keep-alive'), head)
  assert.ok(lines.includes(`content-length: ${PLAN.body.length}`), head)
  assert.equal(body, PLAN.body.toString())
})

test('a header value with CR or LF is refused before anything is written, without echoing the value', async () => {
  const written: Buffer[] = []
  const pool = new H1Pool('http://127.0.0.1:8000', {
    connections: 1,
    openSocket: () => replaySocket([], { written }),
  })
  try {
    const record = await sendRequest(
      targetOf(pool, { headers: { 'x-evil': 'sk-secret-key-123456\r\nx-injected: 1' } }),
      PLAN,
    )
    assert.equal(record.error?.class, 'other')
    assert.match(record.error?.message ?? '', /header x-evil holds CR, LF or NUL/)
    assert.ok(!(record.error?.message ?? '').includes('sk-secret'), 'the value is not in the message')
    assert.equal(written.length, 0)
  } finally {
    await pool.destroy()
  }
})

test('malformed HTTP is a classified failure, whole or a byte per read, never a crash or a hang', async () => {
  const cases: [string, string, boolean, string, RegExp][] = [
    [
      'bad status line',
      'HTPT/1.1 200 OK\r\n\r\n',
      false,
      'other',
      /malformed HTTP response: bad status line/,
    ],
    ['bad chunk size', `${SSE_HEAD}${chunk(EVENT)}xyz\r\n`, false, 'other', /bad chunk size/],
    [
      'a body cut mid-chunk',
      `${SSE_HEAD}${chunk(EVENT)}${chunk(DONE).slice(0, 30)}`,
      true,
      'connection',
      /other side closed mid-response/,
    ],
    [
      'a body cut mid-length',
      'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"a":',
      true,
      'connection',
      /other side closed mid-response/,
    ],
    [
      'a head cut short',
      'HTTP/1.1 200 OK\r\ncontent-ty',
      true,
      'connection',
      /other side closed mid-response/,
    ],
    ['closed before any byte', '', true, 'connection', /other side closed$/],
  ]
  for (const [what, text, end, errorClass, message] of cases) {
    for (const reads of ['whole', 'bytes'] as const) {
      const record = await replayText(text, { end, reads })
      assert.equal(record.error?.class, errorClass, `${what} (${reads}): ${record.error?.message}`)
      assert.match(record.error?.message ?? '', message, what)
    }
  }
})

test('garbage after the end: in the same read the request fails; in a later one the connection is dropped', async () => {
  const text = `${SSE_HEAD}${chunk(EVENT)}${chunk(DONE)}0\r\n\r\nGARBAGE`
  const same = await replayText(text)
  assert.equal(same.error?.class, 'other')
  assert.match(same.error?.message ?? '', /malformed HTTP response: bytes after the end/)
  // A byte per read: the response was complete when the garbage came, on an idle connection.
  const sockets: Socket[] = []
  const pool = new H1Pool('http://127.0.0.1:8000', {
    connections: 1,
    openSocket: () => {
      const reads =
        sockets.length === 0
          ? fixedPieces(Buffer.from(text), 1)
          : [Buffer.from(`${SSE_HEAD}${chunk(DONE)}0\r\n\r\n`)]
      const socket = replaySocket(reads)
      sockets.push(socket)
      return socket
    },
  })
  try {
    const first = await sendRequest(targetOf(pool), PLAN)
    assert.equal(first.error, null, first.error?.message)
    await waitUntil(
      () => sockets[0]?.destroyed === true,
      'the client to destroy the connection that carried garbage',
    )
    const second = await sendRequest(targetOf(pool), PLAN)
    assert.equal(second.error, null, second.error?.message)
    assert.equal(second.connection, 'new', 'the connection that carried garbage is not reused')
    assert.equal(sockets.length, 2)
  } finally {
    await pool.destroy()
  }
})

test('a server that never ends its head fails at the head limit', async () => {
  const head = `HTTP/1.1 200 OK\r\n${'x-filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'.repeat(2000)}`
  const record = await replayText(head)
  assert.equal(record.error?.class, 'other')
  assert.match(record.error?.message ?? '', /header section over 64 KiB/)
})

test('a 1xx before the response, trailers after it: the request succeeds', async () => {
  const record = await replayText(
    `HTTP/1.1 100 Continue\r\n\r\n${SSE_HEAD}${chunk(EVENT)}${chunk(DONE)}0\r\nx-usage: 1\r\n\r\n`,
    { reads: 'bytes' },
  )
  assert.equal(record.error, null, record.error?.message)
  assert.equal(record.status, 200)
  assert.equal(record.chunks, 1)
})

test('a close-delimited event stream ends at the close and succeeds', async () => {
  const record = await replayText(
    `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n${EVENT}${DONE}`,
    { end: true, reads: 'bytes' },
  )
  assert.equal(record.error, null, record.error?.message)
  assert.equal(record.chunks, 1)
})

test('a connection never made in time is a connect timeout', async () => {
  // A socket that never connects (a black-holed address).
  const silent = (): Socket => {
    const socket = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() })
    Object.assign(socket, { setNoDelay: () => socket, setKeepAlive: () => socket })
    return socket as unknown as Socket
  }
  const pool = new H1Pool('http://10.255.255.1:8000', {
    connections: 1,
    connectTimeout: 50,
    openSocket: silent,
  })
  try {
    const record = await sendRequest(targetOf(pool), PLAN)
    assert.equal(record.error?.class, 'timeout')
    assert.equal(record.error?.timeout, 'connect')
    assert.match(
      record.error?.message ?? '',
      /UND_ERR_CONNECT_TIMEOUT connect timeout: no connection to 10\.255\.255\.1:8000 within 50 ms/,
    )
    assert.equal(record.connection, undefined, 'no connection was reached')
  } finally {
    await pool.destroy()
  }
})

test('a destroyed pool refuses new requests as a classified failure', async () => {
  const pool = new H1Pool('http://127.0.0.1:8000', { connections: 1, openSocket: () => replaySocket([]) })
  await pool.destroy()
  const record = await sendRequest(targetOf(pool), PLAN)
  assert.equal(record.error?.class, 'other')
  assert.match(record.error?.message ?? '', /pool was closed/)
})

test('only http and https origins', () => {
  assert.throws(() => new H1Pool('ftp://127.0.0.1', { connections: 1 }), /http and https, not ftp:/)
})

test('a request that dies unanswered on a reused connection is resent once on a new connection of its own', async () => {
  const response = [Buffer.from(`${SSE_HEAD}${chunk(EVENT)}${chunk(DONE)}0\r\n\r\n`)]
  const sockets: Socket[] = []
  const pool = new H1Pool('http://127.0.0.1:8000', {
    connections: 1,
    // The first connection answers once, then the server closes it as the second request arrives.
    openSocket: () => {
      const socket = scriptedSocket(sockets.length === 0 ? [response, 'close'] : [response])
      sockets.push(socket)
      return socket
    },
  })
  try {
    const first = await sendRequest(targetOf(pool), PLAN)
    assert.equal(first.error, null, first.error?.message)
    const second = await sendRequest(targetOf(pool), { ...PLAN, seq: 1 })
    assert.equal(second.error, null, second.error?.message)
    assert.equal(second.connection, 'new')
    assert.match(second.resent?.reason ?? '', /UND_ERR_SOCKET other side closed$/)
    assert.equal(sockets.length, 2, 'the resend opened a connection of its own')
  } finally {
    await pool.destroy()
  }
})
