import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { filesUnder } from '../helpers/files.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'

const KEY = 'sk-DISTINCTIVE-key-4711'

function replay() {
  return startReplayServer(() => ({
    status: 200,
    contentType: 'text/event-stream',
    body: readSseFixture('openai_gpt4o_text_usage.sse'),
  }))
}

function runArgs(url: string, out: string): string[] {
  return [
    'run',
    '--base-url',
    url,
    '--model',
    'm',
    '--levels',
    '1',
    '--requests',
    '2',
    '--warmup',
    '0',
  ].concat(['--no-calibrate', '--out', out])
}

test('a key with a trailing newline (a Secret made from an echo-written file) is trimmed, said once, and works', {
  timeout: 60_000,
}, async () => {
  const server = await replay()
  const out = join(tempDir(), 'result')
  try {
    const named = await runCli([...runArgs(server.url, out), '--api-key-env', 'MY_KEY'], {
      env: { MY_KEY: `${KEY}\r\n` },
    })
    assert.equal(named.code, 0, named.stderr)
    assert.equal(named.stderr.split('has whitespace around the key').length - 1, 1, 'said once')
    assert.match(named.stderr, /\$MY_KEY has whitespace around the key/)
    assert.ok(server.authorizations.includes(`Bearer ${KEY}`), 'the trimmed key was sent')
    assert.ok(!server.authorizations.some((value) => value?.includes('\n')))
    for (const text of [named.stdout, named.stderr]) assert.ok(!text.includes(KEY), 'the key is in no output')
    for (const file of filesUnder(out)) assert.ok(!readFileSync(file, 'utf8').includes(KEY), file)
  } finally {
    await server.close()
  }
})

test('a key holding a control character is refused before anything is sent, naming the variable (exit 2)', {
  timeout: 60_000,
}, async () => {
  const server = await replay()
  try {
    for (const [value, what] of [
      [`${KEY}\u0001x`, 'a control character'],
      [`${KEY}\u2028x`, 'a character outside Latin-1'],
    ] as const) {
      const run = await runCli(
        [...runArgs(server.url, join(tempDir(), 'result')), '--api-key-env', 'MY_KEY'],
        {
          env: { MY_KEY: value },
        },
      )
      assert.equal(run.code, 2, run.stderr)
      assert.match(run.stderr, new RegExp(`\\$MY_KEY: the API key holds ${what} at position 24 of 25`))
      assert.ok(!run.stderr.includes(KEY) && !run.stdout.includes(KEY))
    }
    const check = await runCli(['check', '--base-url', server.url, '--model', 'm'], {
      env: { OPENAI_API_KEY: `${KEY}\u0007` },
    })
    assert.equal(check.code, 2, check.stderr)
    assert.match(check.stderr, /\$OPENAI_API_KEY: the API key holds a control character/)
    assert.equal(server.requests.length, 0, 'nothing was sent')
  } finally {
    await server.close()
  }
})

test('check never prints the key a server echoes in its streamed text, even split over two events', {
  timeout: 60_000,
}, async () => {
  const events = [`echo ${KEY.slice(0, 9)}`, `${KEY.slice(9)} once, `, `and ${KEY}.`]
    .map((content) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`)
    .join('')
  const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`
  const server = await startReplayServer(() => ({
    status: 200,
    contentType: 'text/event-stream',
    body: Buffer.from(events + finish),
    chunkBytes: 40,
    gapMs: 5,
  }))
  try {
    const check = await runCli(['check', '--base-url', server.url, '--model', 'm'], {
      env: { OPENAI_API_KEY: KEY },
    })
    assert.equal(check.code, 0, check.stderr)
    assert.match(check.stdout, /echo \[redacted\] once, and \[redacted\]\./)
    assert.ok(!check.stdout.includes(KEY) && !check.stderr.includes(KEY))
    assert.ok(!check.stdout.includes(KEY.slice(0, 9)), 'not even its first half')
  } finally {
    await server.close()
  }
})
