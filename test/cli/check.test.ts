import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SIM_MODEL } from '../../src/sim/server.js'
import { runCli } from '../helpers/cli.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

test('check and models against the simulator: tokens as they arrive, figures, and each problem told apart (exit 3)', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulatorProcess({ prefill_base_ms: 20, decode_base_ms: 5 })
  try {
    const ok = await runCli(['check', '--base-url', sim.url, '--model', SIM_MODEL, '--output-tokens', '6'])
    assert.equal(ok.code, 0, ok.stderr)
    const [tokens, verdict] = ok.stdout.split('\n')
    assert.equal(tokens?.trim().split(/\s+/).length, 6, `six words printed: ${ok.stdout}`)
    // The verdict follows the tokens on stdout: `check > file` keeps both (issue 36).
    assert.match(verdict ?? '', /^check ok: HTTP 200, TTFT \d+ ms, TPOT [\d.]+ ms, 6 output tokens \(usage/)
    assert.match(ok.stdout, /\ntiming: TTFT/)

    const models = await runCli(['models', '--base-url', sim.url])
    assert.equal(models.code, 0, models.stderr)
    assert.equal(models.stdout, `${SIM_MODEL}\n`)

    const unknown = await runCli(['check', '--base-url', sim.url, '--model', 'gpt-9'])
    assert.equal(unknown.code, 3)
    assert.match(unknown.stderr, /unknown model "gpt-9"[\s\S]*Models served: llmbench-sim\./)

    const endpoint = await runCli([
      'check',
      '--base-url',
      sim.url,
      '--model',
      SIM_MODEL,
      '--endpoint',
      '/v1/chat/complete',
    ])
    assert.equal(endpoint.code, 3)
    assert.match(endpoint.stderr, /endpoint not found/)
  } finally {
    await sim.close()
  }
  const unreachable = await runCli(['check', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'])
  assert.equal(unreachable.code, 3)
  assert.match(unreachable.stderr, /unreachable host: ECONNREFUSED/)
  const noModels = await runCli(['models', '--base-url', 'http://127.0.0.1:9/v1'])
  assert.equal(noModels.code, 3)
})

test('check: a refused key and a response that is not SSE are told apart', { timeout: 30_000 }, async () => {
  const refused = await startReplayServer(() => ({
    status: 403,
    contentType: 'application/json',
    body: Buffer.from('{"error":{"message":"Forbidden"}}'),
  }))
  const html = await startReplayServer(() => ({
    contentType: 'text/html',
    body: Buffer.from('<html><body>login</body></html>'),
  }))
  try {
    const key = await runCli(['check', '--base-url', refused.url, '--model', 'm'])
    assert.equal(key.code, 3)
    assert.match(key.stderr, /the API key was refused \(HTTP 403\)[\s\S]*check the key in \$OPENAI_API_KEY/)
    const notSse = await runCli(['check', '--base-url', html.url, '--model', 'm'])
    assert.equal(notSse.code, 3)
    assert.match(notSse.stderr, /the response is not SSE: HTTP 200 with content-type text\/html/)
  } finally {
    await refused.close()
    await html.close()
  }
})
