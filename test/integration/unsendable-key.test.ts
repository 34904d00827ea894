import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError } from '../../src/config/errors.js'
import { runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const KEY = 'sk-test-DISTINCTIVE-123'

test('a key no header can carry, handed to the library directly, is refused before anything is sent', {
  timeout: 60_000,
}, async () => {
  const server = await startReplayServer(() => ({
    status: 200,
    contentType: 'text/event-stream',
    body: readSseFixture('openai_gpt4o_text_usage.sse'),
  }))
  try {
    const out = join(tempDir(), 'result')
    const config = testConfig(server.url, 'm', {
      levels: [2],
      requests: 4,
      warmup: 0,
      out_dir: out,
      preflight: false,
      calibrate: false,
    })
    config.target.api_key_env = 'MY_KEY'
    const log: string[] = []
    await assert.rejects(
      runGradient({
        config,
        apiKey: `${KEY}\n`,
        outDir: out,
        log: (line) => log.push(line),
        stop: new StopSignal(),
      }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error))
        assert.match(error.message, /\$MY_KEY.*the API key holds a control character at position 24 of 24/s)
        assert.ok(!error.message.includes(KEY), 'the key is not in the message')
        return true
      },
    )
    assert.equal(server.requests.length, 0, 'nothing was sent')
    assert.ok(!log.join('\n').includes(KEY))
  } finally {
    await server.close()
  }
})
