import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { EXACT_COUNT_CHARS } from '../../src/workload/bounded-count.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'
import { runCli, spawnCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { waitUntil } from '../helpers/wait.js'

/**
 * Issue 26 case 1: a server that streams one delta of megabytes without a space (a broken model, a
 * proxy that batches). Counting it whole held the main thread for seconds a request (quadratic
 * before that: 11 minutes, deaf to signals). The run counts a bounded head and takes the rest at
 * its rate, says so per record and per level, and stays in charge of its schedule and signals.
 */

/** 2 MiB of seeded letters: one pre-tokenizer piece. */
function unbroken(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
  const codes = new Uint8Array(length)
  let seed = 11
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    codes[i] = alphabet.charCodeAt(seed % alphabet.length)
  }
  return Buffer.from(codes).toString('latin1')
}

const TEXT = unbroken(2 * 1024 * 1024)

/** Answers every chat request with TEXT in one delta, then a length finish, usage and [DONE]. */
async function startLongServer(
  delayMs = 0,
): Promise<{ url: string; server: Server; answered: () => number }> {
  let answered = 0
  const body = [
    { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
    { choices: [{ index: 0, delta: { content: TEXT } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
    { choices: [], usage: { prompt_tokens: 12, completion_tokens: 16, total_tokens: 28 } },
  ]
    .map(
      (chunk) =>
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', ...chunk })}\n\n`,
    )
    .join('')
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m"}]}')
        return
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(`${body}data: [DONE]\n\n`)
        answered++
      }, delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    server,
    answered: () => answered,
  }
}

const RUN = [
  '--model',
  'm',
  '--output-tokens',
  '16',
  '--input-tokens',
  '16',
  '--warmup',
  '0',
  '--no-calibrate',
]

test('a 2 MiB unbroken delta: a bounded head counted, the rest at its rate, said on the record and the level', {
  timeout: 120_000,
}, async () => {
  const { url, server } = await startLongServer()
  const out = join(tempDir(), 'long')
  try {
    const run = await runCli(
      ['run', '--base-url', url, ...RUN, '--levels', '2', '--requests', '4', '--out', out, '--quiet'],
      {
        timeoutMs: 100_000,
      },
    )
    assert.ok(run.code === 0 || run.code === 1, run.stderr)
    const measured = readRecords(join(out, 'requests.jsonl')).records.filter((r) => r.phase === 'measure')
    assert.equal(measured.length, 4)
    const whole = loadTokenizer('o200k').count(TEXT)
    for (const record of measured) {
      const sampled = record.tokenizer_sampled_chars ?? 0
      assert.ok(
        sampled > EXACT_COUNT_CHARS / 2 && sampled <= EXACT_COUNT_CHARS,
        `counted ${sampled} characters`,
      )
      // The usage (16 tokens for 2 MiB of text) is impossible: the tokenizer's figure stands, and
      // the head's rate puts it within 1% of counting all of it.
      assert.equal(record.token_source, 'tokenizer')
      assert.equal(record.rejected_usage?.completion_tokens, 16)
      assert.ok(
        Math.abs(record.output_tokens - whole) / whole < 0.01,
        `${record.output_tokens} against ${whole} counted whole`,
      )
    }
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
    assert.equal(result.levels[0]?.token_counting.extrapolated, 4)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('SIGTERM while long outputs are counted: the run stops, exit 130, partial results on disk', {
  timeout: 120_000,
}, async () => {
  // 100 ms an answer: 200 requests at 2 streams would take 10 s, so a stop that works ends far short.
  const { url, server, answered } = await startLongServer(100)
  const out = join(tempDir(), 'stopped')
  try {
    const cli = spawnCli([
      'run',
      '--base-url',
      url,
      ...RUN,
      '--levels',
      '2',
      '--requests',
      '200',
      '--out',
      out,
    ])
    // Past the preflight and into the level: answers are arriving and being counted.
    await waitUntil(() => answered() >= 12, 'a dozen long answers sent', 90_000)
    cli.child.kill('SIGTERM')
    assert.equal(await cli.exited, 130, cli.stderr())
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
    assert.equal(result.meta.partial, true)
    const levels = JSON.stringify(
      result.levels.map((level) => [
        level.value,
        level.requests,
        level.ok,
        level.failed,
        level.errors,
        answered(),
      ]),
    )
    assert.ok(result.levels.length === 0 || (result.levels[0]?.requests ?? 0) < 200, levels)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})
