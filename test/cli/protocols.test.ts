// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
/**
 * Each protocol end to end: `llmbench run --protocol responses|messages|embeddings` against the
 * simulator, and `llmbench check --protocol ...` against a loopback server replaying a recording
 * (the probe's body is the protocol's, its answer read by the protocol's parser).
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { startSimulator } from '../../src/sim/server.js'
import { runCli } from '../helpers/cli.js'
import { PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

const OUTPUT_TOKENS = 12

async function runProtocol(
  protocol: string,
  charts = false,
): Promise<{ result: BenchResult; records: RequestRecord[]; stdout: string; out: string }> {
  const flags = {
    protocol,
    levels: '1,2',
    requests: 6,
    warmup: 0,
    'output-tokens': OUTPUT_TOKENS,
    'input-tokens': 64,
    'no-calibrate': true,
  } as const
  const starting = startSimulator({ prefill_base_ms: 2, decode_base_ms: 2 })
  return withSimRun(
    starting,
    { flags, timeoutMs: 90_000, folder: `protocol-${protocol}`, charts },
    ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stderr, /preflight ok/)
      const result = readResult(out)
      const records = readFileSync(join(out, 'requests.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RequestRecord)
        .filter((record) => record.phase === 'measure')
      return { result, records, stdout: run.stdout, out }
    },
  )
}

for (const protocol of ['responses', 'messages'] as const) {
  test(`run --protocol ${protocol} against the simulator: TTFT, tokens from usage, every request a success`, {
    timeout: 120_000,
  }, async () => {
    const { result, records } = await runProtocol(protocol)
    assert.equal(result.meta.target.protocol, protocol)
    assert.equal(result.meta.target.endpoint, `/v1/${protocol}`)
    assert.equal(records.length, 12)
    for (const record of records) {
      assert.equal(record.error, null, record.error?.message)
      assert.ok(record.first_token_at !== null && record.first_token_at > record.sent_at, 'TTFT')
      assert.equal(record.token_source, 'usage')
      assert.equal(record.output_tokens, OUTPUT_TOKENS)
      assert.equal(record.chunks, OUTPUT_TOKENS, 'one event per token')
      assert.equal(record.tokenizer_output_tokens, OUTPUT_TOKENS, 'the text is the tokens usage counts')
      assert.ok((record.input_tokens ?? 0) > 0, 'prompt tokens from usage')
      assert.equal(record.finish_reason, 'length')
    }
    for (const level of result.levels) {
      assert.equal(level.success_rate, 1)
      assert.ok((level.ttft_ms.p50 ?? 0) > 0)
      assert.ok((level.tpot_ms.p50 ?? 0) > 0)
      assert.ok(level.output_tokens_per_s > 0)
      assert.equal(level.embeddings, undefined)
    }
  })
}

test('run --protocol embeddings: latency and inputs/s, tokens/s; TTFT and TPOT shown as not applicable', {
  timeout: 120_000,
}, async () => {
  const { result, records, stdout, out } = await runProtocol('embeddings', true)
  assert.equal(result.meta.workload.stream, false, 'embeddings are never streamed')
  for (const record of records) {
    assert.equal(record.error, null, record.error?.message)
    assert.equal(record.first_token_at, null)
    assert.equal(record.output_tokens, 0)
    assert.ok((record.input_tokens ?? 0) > 0, 'prompt tokens from usage')
  }
  for (const level of result.levels) {
    // A level this short may be judged client-bound on a busy machine; never "no output tokens".
    assert.notEqual(level.verdict, 'misconfigured', 'succeeding with no output token is what embeddings do')
    assert.equal(level.ttft_ms.count, 0)
    assert.equal(level.tpot_ms.count, 0)
    assert.ok(level.e2e_ms.count === 6 && (level.e2e_ms.p50 ?? 0) > 0)
    const figures = level.embeddings
    assert.ok(figures !== undefined)
    // One input per request: inputs/s is the level's request rate; tokens/s the usage over the same window.
    assert.ok(Math.abs(figures.inputs_per_s - level.requests_per_s) < 0.02, JSON.stringify(figures))
    const tokens = records
      .filter((r) => r.level === level.value)
      .reduce((sum, r) => sum + (r.input_tokens ?? 0), 0)
    // duration_s is rounded to the millisecond: the rate it gives is within a few percent.
    const rate = tokens / level.duration_s
    assert.ok(
      Math.abs((figures.input_tokens_per_s ?? 0) - rate) < 0.05 * rate,
      `${figures.input_tokens_per_s} vs ${rate}`,
    )
  }
  assert.match(stdout, /c=1: embeddings [\d.]+ inputs\/s, [\d.]+ input tokens\/s; latency is E2E/)
  assert.doesNotMatch(stdout, /misconfigured|stopped before max_tokens|output tokens are short/)
  // The report draws no empty TTFT or TPOT chart, and counts inputs, not output tokens, per second.
  assert.ok(!existsSync(join(out, 'charts', 'ttft.svg')) && !existsSync(join(out, 'charts', 'tpot-itl.svg')))
  assert.match(readFileSync(join(out, 'charts', 'throughput.svg'), 'utf8'), /series: inputs\/s/)
  const summary = readFileSync(join(out, 'summary.md'), 'utf8')
  // On a busy machine the level may hold under one request in flight on average: then its label says so.
  assert.match(
    summary,
    /\| 1(?: \(avg [\d.]+, max 1\))? \| 6 \| 100\.0% \| – \/ – \/ – \| – \/ – \/ – \| – \| \d+ \| n\/a \|/,
  )
})

test('check --protocol messages and responses: the probe carries the protocol body, its answer is read by the protocol parser', {
  timeout: 60_000,
}, async () => {
  for (const [protocol, recording, text] of [
    ['messages', 'anthropic-messages-basic.sse', 'Hello there!'],
    ['responses', 'openai-responses-cached-tokens-web-search.sse', null],
  ] as const) {
    const server = await startReplayServer(() => ({
      body: readFileSync(`${PROTOCOL_FIXTURE_DIR}${recording}`),
      contentType: 'text/event-stream',
      chunkBytes: 50,
    }))
    try {
      const check = await runCli([
        'check',
        '--base-url',
        server.url,
        '--model',
        'm',
        '--protocol',
        protocol,
        '--output-tokens',
        '5',
      ])
      assert.equal(check.code, 0, check.stderr)
      assert.match(check.stdout, /check ok: HTTP 200, TTFT \d+ ms/)
      if (text !== null) assert.match(check.stdout, new RegExp(text))
      const body = server.requests[0] as Record<string, unknown>
      if (protocol === 'messages') {
        assert.deepEqual(body, {
          model: 'm',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'Say hello.' }],
          stream: true,
        })
        assert.match(check.stdout, /6 output tokens \(usage, 11 prompt tokens\)/)
      } else {
        assert.deepEqual(body, { model: 'm', input: 'Say hello.', max_output_tokens: 5, stream: true })
        assert.match(check.stdout, /582 output tokens \(usage, 9463 prompt tokens\)/)
      }
    } finally {
      await server.close()
    }
  }
})
