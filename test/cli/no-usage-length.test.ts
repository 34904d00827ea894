import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'

const MAX_TOKENS = 64

/**
 * A server that sends no usage and MAX_TOKENS events of "ab": our tokenizer counts the joined
 * "abab..." as fewer tokens than the server generated.
 */
function stream(finishReason: string): Buffer {
  const event = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  return Buffer.from(
    `${event({ content: 'ab' }).repeat(MAX_TOKENS)}${event({}, finishReason)}data: [DONE]\n\n`,
  )
}

async function runAgainst(finishReason: string) {
  const server = await startReplayServer(() => ({
    status: 200,
    contentType: 'text/event-stream',
    body: stream(finishReason),
  }))
  const out = join(tempDir(), 'result')
  try {
    const run = await runCli([
      'run',
      '--base-url',
      server.url,
      '--model',
      'm',
      '--levels',
      '1',
      '--requests',
      '3',
      '--warmup',
      '0',
      '--output-tokens',
      String(MAX_TOKENS),
      '--no-calibrate',
      '--out',
      out,
    ])
    assert.equal(run.code, 0, run.stderr)
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    const output = result.levels[0].output
    assert.ok(output.tokens.mean < MAX_TOKENS, `the tokenizer counted fewer: ${output.tokens.mean}`)
    return { text: run.stdout + run.stderr, stoppedEarly: output.stopped_early as number }
  } finally {
    await server.close()
  }
}

test('no usage and finish_reason "length" everywhere: no "stopped before max_tokens" warning', {
  timeout: 90_000,
}, async () => {
  const length = await runAgainst('length')
  assert.equal(length.stoppedEarly, 0)
  assert.doesNotMatch(length.text, /stopped before max_tokens/)
  // The same counts with finish_reason "stop" are early stops, and said.
  const stop = await runAgainst('stop')
  assert.equal(stop.stoppedEarly, 3)
  assert.match(stop.text, /c=1: 3 of 3 requests stopped before max_tokens/)
})
