import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { failureCause } from '../../src/records/failure-cause.js'
import { runCli } from '../helpers/cli.js'
import { makeRecord } from '../helpers/records.js'

test('a 307 names where the endpoint went and what to set (exit 3), instead of "HTTP 307: (empty body)"', {
  timeout: 60_000,
}, async () => {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    req.resume()
    res.writeHead(307, { location: '/api/v2/chat/completions' })
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  try {
    const run = await runCli([
      'run',
      '--base-url',
      `http://127.0.0.1:${port}/v1`,
      '--model',
      'm',
      '--levels',
      '1',
    ])
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /redirected \(HTTP 307\): HTTP 307: redirect to \/api\/v2\/chat\/completions/)
    assert.match(run.stderr, /set --base-url\/--endpoint to the location the server names/)
    assert.equal(requests, 1, 'the redirect is not followed')
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

test('HTTP 413 names the fix: a smaller request', () => {
  const record = makeRecord({
    status: 413,
    error: { class: 'http_4xx', message: 'HTTP 413: Payload Too Large' },
  })
  assert.match(failureCause(record)?.hint ?? '', /lower --input-tokens/)
})
