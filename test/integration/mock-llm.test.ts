import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import { countTokens } from 'gpt-tokenizer'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { freePort } from '../helpers/free-port.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const REPLY = 'Benchmarks measure the server, not the client. Count tokens, not chunks: 42 of them, maybe.'
const CHUNK_CHARS = 5

/** The third-party npm server @dwmkerr/mock-llm: char chunks, no usage, so our tokenizer counts. */
async function startMockLlm(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const configPath = join(dir, 'mock-llm.yaml')
  writeFileSync(
    configPath,
    [
      'streaming:',
      `  chunkSize: ${CHUNK_CHARS}`,
      '  chunkIntervalMs: 10',
      'rules:',
      '  - path: "/v1/chat/completions"',
      '    match: "@"',
      '    response:',
      '      status: 200',
      '      content: |',
      `        {"id": "chatcmpl-1", "object": "chat.completion", "model": "mock", "choices": [{"message": {"role": "assistant", "content": ${JSON.stringify(REPLY)}}, "finish_reason": "stop"}]}`,
      '',
    ].join('\n'),
  )
  const port = await freePort()
  const main = createRequire(import.meta.url).resolve('@dwmkerr/mock-llm/dist/main.js')
  const child = spawn(process.execPath, [main, '--config', configPath], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  try {
    await new Promise<void>((resolve, reject) => {
      // Long enough for a loaded host (the start of a node process and its modules); the test's own
      // timeout is the bound that matters.
      const timer = setTimeout(() => reject(new Error('mock-llm did not start within 45 s')), 45_000)
      child.stdout?.on('data', (data: Buffer) => {
        if (data.toString().includes('running on')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', (code) => reject(new Error(`mock-llm exited with ${code}`)))
    })
  } catch (error) {
    // A child left running holds this file's process open: the test runner, and the suite's lane
    // with it, waited on it for half an hour at load 24 when the start took longer than 15 s.
    child.kill()
    throw error
  }
  return { url: `http://127.0.0.1:${port}`, child }
}

test('a run against @dwmkerr/mock-llm counts tokens with the tokenizer, not per chunk', {
  timeout: 120_000,
}, async () => {
  const out = tempDir()
  const { url, child } = await startMockLlm(out)
  try {
    // base_url without /v1: the endpoint is joined as /v1/chat/completions.
    const config = testConfig(url, 'mock', { levels: [1, 3], requests: 6, out_dir: out })
    const outcome = await runGradient({
      config,
      apiKey: null,
      outDir: out,
      log: () => {},
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done')
    if (outcome.kind !== 'done') return
    const expectedTokens = countTokens(REPLY)
    const expectedChunks = Math.ceil(REPLY.length / CHUNK_CHARS)
    for (const level of outcome.result.levels) {
      assert.equal(level.ok, 6, JSON.stringify(level.errors))
      assert.equal(level.token_counting.from_tokenizer, 6)
      assert.equal(level.token_counting.from_usage, 0)
      assert.equal(level.output_tokens, 6 * expectedTokens)
      // mock-llm waits 10 ms between chunks: the gaps we measure cannot be shorter than ~10 ms.
      assert.ok(
        (level.itl_ms.p50 as number) >= 9 && (level.itl_ms.p50 as number) < 40,
        `ITL ${level.itl_ms.p50}`,
      )
    }
    const measured = readRecords(join(out, 'requests.jsonl')).records.filter((r) => r.phase === 'measure')
    assert.equal(measured.length, 12)
    for (const record of measured) {
      assert.equal(record.chunks, expectedChunks)
      assert.notEqual(record.output_tokens, record.chunks)
    }
  } finally {
    child.kill()
  }
})
