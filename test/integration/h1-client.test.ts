/**
 * The h1 client over loopback, against real node:http servers on free ports (each closed after):
 * every recording gives the same record as through undici's Pool (what the streaming path used
 * before); keep-alive and the server's closes; a large body against a server that reads slowly;
 * TLS with the test CA and SNI; a connection held after [DONE].
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { after, before, test } from 'node:test'
import type { TLSSocket } from 'node:tls'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { Pool } from 'undici'
import { ConnectionWatch } from '../../src/client/connections.js'
import { H1Pool } from '../../src/client/h1/pool.js'
import { trustedCertificates } from '../../src/client/h1/tls.js'
import { sendRequest } from '../../src/client/stream-client.js'
import { PROTOCOL_FIXTURE_DIR, SSE_FIXTURE_DIR } from '../helpers/fixtures.js'
import { measurePlan, protocolOf, recordContent } from '../helpers/recordings.js'
import { type ReplayServer, startReplayServer } from '../helpers/replay-server.js'
import { streamTarget } from '../helpers/request-plan.js'
import { waitUntil } from '../helpers/wait.js'

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url))
const CERT = `${TLS_DIR}cert.pem`
// Read when the first TLS connection builds the process's one secure context (client/h1/tls.ts).
process.env.NODE_EXTRA_CA_CERTS = CERT

const PLAN = measurePlan()

const targetOf = streamTarget

let replay: ReplayServer
let origin: string

before(async () => {
  replay = await startReplayServer((path) => {
    const name = decodeURIComponent(path.split('/').pop() ?? '')
    const dir = path.includes('/protocols/') ? PROTOCOL_FIXTURE_DIR : SSE_FIXTURE_DIR
    return { body: readFileSync(dir + name), chunkBytes: 97 }
  })
  origin = new URL(replay.url).origin
})

after(async () => {
  await replay.close()
})

test('every recording: the h1 client gives the record undici gives', { timeout: 60_000 }, async () => {
  const h1 = new H1Pool(origin, { connections: 2 })
  const undici = new Pool(origin, { connections: 2 })
  try {
    const names = [
      ...readdirSync(SSE_FIXTURE_DIR)
        .filter((name) => name.endsWith('.sse'))
        .map((name) => `/v1/sse/${name}`),
      ...readdirSync(PROTOCOL_FIXTURE_DIR)
        .filter((name) => name.endsWith('.sse'))
        .map((name) => `/v1/protocols/${name}`),
    ]
    for (const path of names) {
      const protocol = protocolOf(path.split('/').pop() ?? '')
      const ours = await sendRequest(targetOf(h1, origin, { path, protocol }), PLAN)
      const theirs = await sendRequest(targetOf(undici, origin, { path, protocol }), PLAN)
      assert.equal(ours.status, 200, path)
      assert.deepEqual(recordContent(ours, false), recordContent(theirs, false), path)
    }
  } finally {
    await h1.destroy()
    await undici.destroy()
  }
})

/** A server that answers every POST with one short event stream; `respond` may change the answer. */
async function startServer(
  respond: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void = sendStream,
): Promise<{ server: Server; origin: string; sockets: () => number }> {
  let sockets = 0
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => respond(req, res, Buffer.concat(parts)))
  })
  server.on('connection', () => sockets++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets: () => sockets,
  }
}

function sendStream(
  _req: IncomingMessage,
  res: ServerResponse,
  _body: Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', ...headers })
  res.write('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n')
  res.end('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

test('keep-alive: requests reuse the connection', async () => {
  const { server, origin, sockets } = await startServer()
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const connections: (string | undefined)[] = []
    for (let i = 0; i < 3; i++) {
      const record = await sendRequest(targetOf(pool, origin), { ...PLAN, seq: i })
      assert.equal(record.error, null, record.error?.message)
      connections.push(record.connection)
    }
    assert.deepEqual(connections, ['new', 'reused', 'reused'])
    assert.equal(sockets(), 1)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test("the server's connection: close is honoured: the next request opens a new connection", async () => {
  const { server, origin, sockets } = await startServer((req, res, body) =>
    sendStream(req, res, body, { connection: 'close' }),
  )
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    for (let i = 0; i < 3; i++) {
      const record = await sendRequest(targetOf(pool, origin), { ...PLAN, seq: i })
      assert.equal(record.error, null, record.error?.message)
      assert.equal(record.connection, 'new')
      assert.equal(record.resent, undefined)
    }
    assert.equal(sockets(), 3)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('reset asks for connection: close and never reuses the connection', async () => {
  const seen: (string | undefined)[] = []
  const { server, origin, sockets } = await startServer((req, res, body) => {
    seen.push(req.headers.connection)
    sendStream(req, res, body)
  })
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    for (let i = 0; i < 2; i++) {
      const done = new Promise<void>((resolve, reject) =>
        pool.dispatch(
          { origin, path: '/', method: 'POST', headers: {}, body: '{}', reset: true },
          { onResponseEnd: () => resolve(), onResponseError: (_c, error) => reject(error) },
        ),
      )
      await done
    }
    assert.deepEqual(seen, ['close', 'close'])
    assert.equal(sockets(), 2)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('an idle connection the server closed is dropped: the next request opens a new one, no failure, no resend', async () => {
  const { server, origin, sockets } = await startServer()
  server.keepAliveTimeout = 100
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const first = await sendRequest(targetOf(pool, origin), PLAN)
    assert.equal(first.error, null)
    await waitUntil(() => pool.openConnections === 0, "the server's idle close to reach the client")
    assert.equal(pool.openConnections, 0, 'the closed idle connection was dropped')
    const second = await sendRequest(targetOf(pool, origin), { ...PLAN, seq: 1 })
    assert.equal(second.error, null, second.error?.message)
    assert.equal(second.connection, 'new')
    assert.equal(second.resent, undefined)
    assert.equal(sockets(), 2)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('a large request body reaches a server that reads it slowly, intact (back-pressure, not a buffer)', {
  timeout: 60_000,
}, async () => {
  let received = ''
  const server = createServer((req, res) => {
    const hash = createHash('sha256')
    req.pause()
    // The server stalls a while before reading: the client's writes must wait for 'drain'.
    setTimeout(() => {
      req.on('data', (part: Buffer) => hash.update(part))
      req.on('end', () => {
        received = hash.digest('hex')
        sendStream(req, res, Buffer.alloc(0))
      })
      req.resume()
    }, 300)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const body = Buffer.alloc(24 * 1024 * 1024)
    for (let i = 0; i < body.length; i += 4096) body.writeUInt32LE(i, i)
    const record = await sendRequest(targetOf(pool, origin), { ...PLAN, body })
    assert.equal(record.error, null, record.error?.message)
    assert.equal(received, createHash('sha256').update(body).digest('hex'))
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('a connection held open after [DONE] is cut and not reused', { timeout: 30_000 }, async () => {
  const { server, origin, sockets } = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write(
      'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    )
  })
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const first = await sendRequest(targetOf(pool, origin), PLAN)
    assert.equal(first.error, null, first.error?.message)
    const second = await sendRequest(targetOf(pool, origin), { ...PLAN, seq: 1 })
    assert.equal(second.error, null, second.error?.message)
    assert.equal(second.connection, 'new')
    assert.equal(sockets(), 2)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('TLS: the test CA through NODE_EXTRA_CA_CERTS, SNI for a host name, none for an address', {
  timeout: 30_000,
}, async () => {
  const names: (string | false)[] = []
  const server = createTlsServer(
    { key: readFileSync(`${TLS_DIR}key.pem`), cert: readFileSync(CERT) },
    (req, res) => {
      names.push((req.socket as TLSSocket & { servername: string | false }).servername)
      req.resume()
      req.on('end', () => sendStream(req, res, Buffer.alloc(0)))
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  try {
    for (const origin of [`https://localhost:${port}`, `https://127.0.0.1:${port}`]) {
      const pool = new H1Pool(origin, { connections: 1 })
      try {
        const record = await sendRequest(targetOf(pool, origin), PLAN)
        assert.equal(record.error, null, `${origin}: ${record.error?.message}`)
        assert.equal(record.chunks, 1)
      } finally {
        await pool.destroy()
      }
    }
    assert.deepEqual(names, ['localhost', false])
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

test("the trust store: Node's roots, the system's bundle when present, and NODE_EXTRA_CA_CERTS", () => {
  const cert = readFileSync(CERT, 'utf8')
  const withExtra = trustedCertificates({ NODE_EXTRA_CA_CERTS: CERT })
  const without = trustedCertificates({})
  assert.ok(withExtra.includes(cert))
  assert.ok(!without.includes(cert))
  assert.equal(withExtra.length, without.length + 1)
  assert.ok(without.length >= 100, "Node's bundled roots at least")
})

test('a response that comes before its large body was written: the next request is not written into that body', {
  timeout: 60_000,
}, async () => {
  // A raw server that keeps the connection alive and frames requests strictly: a head, then
  // exactly content-length bytes of body, then the next head. It refuses the first request as soon
  // as its head arrives, while the client is still writing the large body.
  let sockets = 0
  const heads: number[] = []
  const server = createNetServer((socket) => {
    sockets++
    let pending = Buffer.alloc(0)
    let bodyLeft = 0
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data])
      for (;;) {
        if (bodyLeft > 0) {
          const taken = Math.min(bodyLeft, pending.length)
          bodyLeft -= taken
          pending = pending.subarray(taken)
          if (bodyLeft > 0) return
          if (heads.length > 1) socket.write(OK_STREAM)
        }
        const end = pending.indexOf('\r\n\r\n')
        if (end === -1) return
        const length = Number(
          /content-length: *(\d+)/i.exec(pending.subarray(0, end).toString('latin1'))?.[1] ?? 0,
        )
        heads.push(length)
        pending = pending.subarray(end + 4)
        bodyLeft = length
        if (heads.length === 1) socket.write(REFUSED)
        else if (length === 0) socket.write(OK_STREAM)
      }
    })
    socket.on('error', () => socket.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const refused = await sendRequest(targetOf(pool, origin), {
      ...PLAN,
      body: Buffer.alloc(8 * 1024 * 1024),
    })
    assert.equal(refused.status, 401)
    const second = await sendRequest(targetOf(pool, origin, { timeoutMs: 10_000 }), { ...PLAN, seq: 1 })
    assert.equal(second.error, null, second.error?.message)
    assert.equal(second.connection, 'new')
    assert.deepEqual(heads, [8 * 1024 * 1024, PLAN.body.length])
    assert.equal(sockets, 2)
  } finally {
    await pool.destroy()
    server.close()
  }
})

const REFUSED = Buffer.from(
  'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 30\r\n\r\n{"error":{"message":"no key"}}',
)
const OK_STREAM = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 81\r\n\r\n' +
    'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n',
)

test('a handler that throws while its response is read fails that request, not the thread', async () => {
  const { server, origin } = await startServer()
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const failure = await new Promise<Error>((resolve) => {
      pool.dispatch(
        { origin, path: '/v1/chat/completions', method: 'POST', body: Buffer.from('{}') },
        {
          onResponseData() {
            throw new Error('a bug in a handler')
          },
          onResponseError(_controller, error) {
            resolve(error)
          },
        },
      )
    })
    assert.equal(failure.message, 'a bug in a handler')
    assert.equal(pool.openConnections, 0, 'the connection it happened on is not reused')
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('a request that times out while waiting for a connection is never written', {
  timeout: 30_000,
}, async () => {
  const seen: string[] = []
  let releaseFirst: () => void = () => {}
  const firstHeld = new Promise<void>((resolve) => {
    releaseFirst = resolve
  })
  const { server, origin } = await startServer((req, res, body) => {
    seen.push(body.toString())
    if (seen.length === 1) void firstHeld.then(() => sendStream(req, res, body))
    else sendStream(req, res, body)
  })
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const first = sendRequest(targetOf(pool, origin), { ...PLAN, body: Buffer.from('"first"') })
    // The pool's one connection is busy: this one waits in its queue until its own timeout.
    const waited = await sendRequest(targetOf(pool, origin, { timeoutMs: 300 }), {
      ...PLAN,
      seq: 1,
      body: Buffer.from('"timed out"'),
    })
    assert.equal(waited.error?.class, 'timeout')
    releaseFirst()
    assert.equal((await first).error, null)
    const last = await sendRequest(targetOf(pool, origin), { ...PLAN, seq: 2, body: Buffer.from('"last"') })
    assert.equal(last.error, null, last.error?.message)
    assert.deepEqual(seen, ['"first"', '"last"'])
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('a HEAD response ends at its head, whatever its content-length says', { timeout: 30_000 }, async () => {
  const { server, origin } = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
    res.end()
  })
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const status = await new Promise<number>((resolve, reject) => {
      let head = 0
      pool.dispatch(
        { origin, path: '/v1/models', method: 'HEAD' },
        {
          onResponseStart(_controller, statusCode) {
            head = statusCode
          },
          onResponseEnd() {
            resolve(head)
          },
          onResponseError(_controller, error) {
            reject(error)
          },
        },
      )
    })
    assert.equal(status, 200)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test("a compressed body that fails to decode after its response ended does not cut the connection's next request", {
  timeout: 30_000,
}, async () => {
  // The first answer: a gzip event stream missing its gzip trailer, in a complete HTTP response
  // (content-length), so the decoder fails only after the response's end, when the connection
  // already carries the second request. That request streams slowly, so it is still being read then.
  const whole = gzipSync(
    'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  )
  const truncated = whole.subarray(0, whole.length - 8)
  let requests = 0
  let secondStarted: () => void = () => {}
  const secondWritten = new Promise<void>((resolve) => {
    secondStarted = resolve
  })
  const { server, origin, sockets } = await startServer((_req, res) => {
    requests++
    if (requests === 1) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'content-encoding': 'gzip',
        'content-length': String(truncated.length),
      })
      res.end(truncated)
      return
    }
    secondStarted()
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    let sent = 0
    const next = (): void => {
      if (sent === 5) {
        res.end('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
        return
      }
      sent++
      res.write(`data: {"choices":[{"index":0,"delta":{"content":"t${sent}"},"finish_reason":null}]}\n\n`)
      setTimeout(next, 30)
    }
    next()
  })
  const pool = new H1Pool(origin, { connections: 1 })
  try {
    const first = sendRequest(targetOf(pool, origin), PLAN)
    // Queued behind the first on the pool's one connection: written as soon as the first response ends.
    const second = sendRequest(targetOf(pool, origin), { ...PLAN, seq: 1 })
    const failed = await first
    assert.match(failed.error?.message ?? '', /compressed stream \(gzip\) that does not decode/)
    await secondWritten
    const record = await second
    assert.equal(record.error, null, record.error?.message)
    assert.equal(record.connection, 'reused')
    assert.equal(record.chunks, 5)
    assert.equal(sockets(), 1)
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})

test('a response the server cuts midway on a reused connection is its failure, not a habit of closing after responses', {
  timeout: 30_000,
}, async () => {
  let requests = 0
  const { server, origin } = await startServer((req, res, body) => {
    requests++
    if (requests === 1) {
      sendStream(req, res, body)
      return
    }
    // The next request, right after the first response: its response begins, then the server's FIN.
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n', () =>
      res.socket?.end(),
    )
  })
  const pool = new H1Pool(origin, { connections: 1 })
  const watch = new ConnectionWatch(true)
  try {
    const first = await sendRequest(targetOf(pool, origin, { connections: watch }), PLAN)
    assert.equal(first.error, null, first.error?.message)
    const cut = await sendRequest(targetOf(pool, origin, { connections: watch }), { ...PLAN, seq: 1 })
    assert.equal(cut.connection, 'reused')
    assert.equal(cut.status, 200)
    assert.equal(cut.error?.class, 'connection', cut.error?.message)
    assert.deepEqual(watch.take(), { closed_by_server: 0, keepalive: true })
  } finally {
    await pool.destroy()
    await closeServer(server)
  }
})
