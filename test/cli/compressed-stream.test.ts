import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { constants, createGzip } from 'node:zlib'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

const TOKENS = 6
const GAP_MS = 40

/** An event stream as a compressing proxy sends it: gzip, flushed after every event. */
async function gzippedStream(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' })
  const gzip = createGzip()
  gzip.pipe(res)
  const send = (data: string) =>
    new Promise<void>((resolve) => {
      gzip.write(`data: ${data}\n\n`)
      gzip.flush(constants.Z_SYNC_FLUSH, () => resolve())
    })
  for (let i = 0; i < TOKENS; i++) {
    await send(JSON.stringify({ choices: [{ index: 0, delta: { content: ` t${i}` }, finish_reason: null }] }))
    await sleep(GAP_MS)
  }
  await send(
    JSON.stringify({
      choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
      usage: { prompt_tokens: 10, completion_tokens: TOKENS, total_tokens: 10 + TOKENS },
    }),
  )
  await send('[DONE]')
  gzip.end()
}

async function withServer(
  answer: (res: ServerResponse, headers: IncomingHttpHeaders) => void,
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = createServer((req, res) => {
    req.resume()
    req.once('end', () => answer(res, req.headers))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  try {
    await body(`http://127.0.0.1:${port}/v1`)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

const ARGS = [
  '--model',
  'm',
  '--levels',
  '1',
  '--requests',
  '3',
  '--warmup',
  '0',
  '--output-tokens',
  String(TOKENS),
]

test('a gzip-encoded event stream (a compressing proxy) is decoded as it arrives: every request a success, tokens timed on arrival', {
  timeout: 90_000,
}, async () => {
  const acceptEncodings = new Set<string>()
  await withServer(
    (res, headers) => {
      acceptEncodings.add(String(headers['accept-encoding']))
      void gzippedStream(res)
    },
    async (url) => {
      const out = join(tempDir(), 'result')
      const run = await runCli(['run', '--base-url', url, ...ARGS, '--no-calibrate', '--out', out])
      assert.equal(run.code, 0, run.stderr)
      assert.doesNotMatch(run.stderr, /without \[DONE\]|not in the OpenAI streaming format/)
      assert.deepEqual([...acceptEncodings], ['identity'], 'llmbench asks for an uncompressed body')
      const { records } = readRecords(join(out, 'requests.jsonl'))
      const measured = records.filter((record) => record.phase === 'measure')
      assert.equal(measured.length, 3)
      for (const record of measured) {
        assert.equal(record.error, null, JSON.stringify(record.error))
        assert.equal(record.token_times.length, TOKENS)
        // The server waits GAP_MS between tokens: stamps taken at the end of the body would bunch up
        // (all within a millisecond or two). Half the server's spread tells the two apart on a loaded
        // machine, where a first read stamped late shortens it (seen at load 10: 176 ms of 200).
        const spread = (record.token_times.at(-1) as number) - (record.token_times[0] as number)
        assert.ok(spread >= (TOKENS - 1) * GAP_MS * 0.5, `tokens ${spread.toFixed(1)} ms apart in all`)
      }
    },
  )
})

test('a compressed stream llmbench cannot decode is named as such (exit 3), not as a stream without [DONE]', {
  timeout: 60_000,
}, async () => {
  await withServer(
    (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'zstd' })
      res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]))
    },
    async (url) => {
      const out = join(tempDir(), 'result')
      const run = await runCli(['run', '--base-url', url, ...ARGS, '--out', out])
      assert.equal(run.code, 3, run.stderr)
      assert.match(run.stderr, /compressed stream \(zstd\) that llmbench cannot decode/)
      assert.doesNotMatch(run.stderr, /without \[DONE\]/)
      // A failed preflight leaves no result folder.
      assert.equal(existsSync(out), false)
    },
  )
})
