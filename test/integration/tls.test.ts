import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { runCli } from '../helpers/cli.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url))
const CERT = join(TLS_DIR, 'cert.pem')

async function withTlsServer(body: (url: string) => Promise<void>): Promise<void> {
  const server = await startReplayServer(
    () => ({ body: readSseFixture('openai_gpt4o_text_usage.sse'), chunkBytes: 128 }),
    {
      tls: { key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(CERT) },
    },
  )
  try {
    await body(server.url)
  } finally {
    await server.close()
  }
}

test('a run over TLS works when the server certificate is trusted (NODE_EXTRA_CA_CERTS)', {
  timeout: 60_000,
}, async () => {
  await withTlsServer(async (url) => {
    assert.match(url, /^https:/)
    const out = join(tempDir(), 'result')
    const result = await runCli(
      [
        'run',
        '--base-url',
        url,
        '--model',
        'm',
        '--levels',
        '2',
        '--requests',
        '4',
        '--warmup',
        '0',
        '--json',
        '--quiet',
        '--out',
        out,
      ],
      {
        env: { NODE_EXTRA_CA_CERTS: CERT },
      },
    )
    assert.equal(result.code, 0, result.stderr)
    const summary = JSON.parse(result.stdout)
    assert.equal(summary.levels[0].ok, 4)
    assert.equal(summary.levels[0].output_tokens, 4 * 30)
  })
})

test('an untrusted certificate fails the preflight as a connection problem (exit 3)', {
  timeout: 60_000,
}, async () => {
  await withTlsServer(async (url) => {
    const result = await runCli([
      'run',
      '--base-url',
      url,
      '--model',
      'm',
      '--levels',
      '1',
      '--out',
      join(tempDir(), 'r'),
    ])
    assert.equal(result.code, 3)
    assert.match(result.stderr, /preflight failed: TLS failure: .*(SELF_SIGNED|certificate)/i)
  })
})

test('a certificate for another name is named as such, not as an untrusted one (exit 3)', {
  timeout: 60_000,
}, async () => {
  const cert = readFileSync(join(TLS_DIR, 'other-name-cert.pem'))
  const server = await startReplayServer(
    () => ({ body: readSseFixture('openai_gpt4o_text_usage.sse'), chunkBytes: 128 }),
    { tls: { key: readFileSync(join(TLS_DIR, 'other-name-key.pem')), cert } },
  )
  try {
    const result = await runCli(
      ['run', '--base-url', server.url, '--model', 'm', '--levels', '1', '--out', join(tempDir(), 'r')],
      { env: { NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'other-name-cert.pem') } },
    )
    assert.equal(result.code, 3, result.stderr)
    assert.match(result.stderr, /preflight failed: TLS failure: the certificate is for another host name/)
    assert.match(result.stderr, /subject alternative names/)
    // Trusting it more would not help: the CA advice is not given.
    assert.doesNotMatch(result.stderr, /NODE_EXTRA_CA_CERTS/)
  } finally {
    await server.close()
  }
})

test('a TLS handshake that never finishes is a handshake timeout on a reachable host, not an unreachable one', {
  timeout: 60_000,
}, async () => {
  // Takes the TCP connection and says nothing: the client's ClientHello waits for an answer.
  const sockets = new Set<Socket>()
  const silent = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const { port } = silent.address() as AddressInfo
  try {
    const result = await runCli([
      'run',
      '--base-url',
      `https://127.0.0.1:${port}/v1`,
      '--model',
      'm',
      '--levels',
      '1',
      '--connect-timeout',
      '1',
      '--out',
      join(tempDir(), 'r'),
    ])
    assert.equal(result.code, 3, result.stderr)
    assert.match(result.stderr, /TLS handshake not finished \(the host is reachable\)/)
    assert.match(result.stderr, /did not finish the TLS handshake within 1000 ms/)
    assert.doesNotMatch(result.stderr, /unreachable/)
  } finally {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  }
})
