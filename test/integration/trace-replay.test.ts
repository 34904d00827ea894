// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { summarizeSamples } from '../../src/metrics/distribution.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE, RESULT_FILE } from '../../src/result/folder-layout.js'
import { startSimulator } from '../../src/sim/server.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'
import { loadTraceFile, MOONCAKE_BLOCK_TOKENS } from '../../src/workload/trace-file.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

/** A copy of ../shared/fixtures/traces (see the README beside it): 30 Mooncake rows over 9 s. */
const MOONCAKE = fileURLToPath(
  new URL('../fixtures/trace-replay/mooncake-fast25-conversation.head30.jsonl', import.meta.url),
)
const SPEED = 10

test('a Mooncake excerpt replayed at 10x against the simulator: its rows, at their times, measured from them', {
  timeout: 180_000,
}, async () => {
  const rows = loadTraceFile(MOONCAKE).rows
  // Fast decode, every prompt token counted exactly (o200k, no template), slots for every row.
  const starting = startSimulator({
    slots: 64,
    prefill_base_ms: 2,
    prefill_ms_per_token: 0,
    decode_base_ms: 1,
    decode_ms_per_seq: 0,
    prompt_counting: 'exact',
  })
  const replay = {
    flags: { trace: MOONCAKE, 'trace-speed': SPEED, warmup: 0, 'no-server-metrics': true },
    // Two worker threads: the rows are dealt between them, and row i must still send body i.
    extra: ['--workers', '2'],
    timeoutMs: 150_000,
  } as const
  await withSimRun(starting, replay, ({ out, run: cli }) => {
    assert.equal(cli.code, 0, cli.stderr)
    const meta = (JSON.parse(readFileSync(join(out, RESULT_FILE), 'utf8')) as BenchResult).meta
    assert.equal(meta.server_metrics, null, 'no scraping: no interval')

    const records = readRecords(join(out, RECORDS_FILE)).records.filter((r) => r.phase === 'measure')
    assert.equal(records.length, rows.length, 'one request per row of the window')
    assert.deepEqual(
      records.map((r) => r.prompt_id).sort((a, b) => a - b),
      rows.map((_, i) => i),
    )
    const origin = Math.min(...records.map((r) => r.scheduled_at))
    for (const record of records) {
      const row = rows[record.prompt_id] as (typeof rows)[number]
      // Intended times are the trace's offsets / 10, exactly (all rows share one level start).
      const intended = (row.at_ms - (rows[0]?.at_ms ?? 0)) / SPEED
      assert.ok(Math.abs(record.scheduled_at - origin - intended) < 1e-6, `row ${record.prompt_id}`)
      // Actual sends: never early, and late only loosely bounded (a busy machine).
      const late = record.sent_at - record.scheduled_at
      assert.ok(late >= 0 && late < 5_000, `row ${record.prompt_id} sent ${late} ms late`)
      assert.equal(record.error, null)
      // The body was row i's: the server counted its input exactly, and it asked row i's output.
      assert.equal(record.input_tokens, row.input_tokens, `row ${record.prompt_id} input`)
      assert.equal(record.requested_output_tokens, row.output_tokens)
      assert.equal(record.output_tokens, row.output_tokens, `row ${record.prompt_id} output`)
    }

    const result = readResult(out)
    assert.deepEqual(
      { ...result.meta.trace, file: undefined },
      {
        file: undefined,
        format: 'mooncake',
        rows_in_file: 30,
        rows_used: 30,
        skipped: null,
        window: { start_s: 0, duration_s: null, max_requests: null },
        span_s: 9,
        speeds: [SPEED],
      },
    )
    const level = result.levels[0] as BenchResult['levels'][number]
    assert.equal(level.value, SPEED)
    // Latency from the intended time: the result's figures are those of (event - scheduled_at).
    const fromIntended = summarizeSamples(
      records.map((r) => (r.first_token_at as number) - r.scheduled_at),
      result.meta.percentiles,
    )
    assert.deepEqual(level.ttft_ms_from_intended, fromIntended)
    const lateness = records.map((r) => r.sent_at - r.scheduled_at)
    assert.ok(Math.abs((level.schedule?.lateness_max_ms ?? -1) - Math.max(...lateness)) < 0.01)
    assert.equal(level.schedule?.planned, 30)
    assert.equal(level.schedule?.dropped, 0)
    // The terminal says the lateness.
    assert.match(
      cli.stdout + cli.stderr,
      /speed 10x: sent late by p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms \(actual send minus the trace's time/,
    )
  })
})

const AZURE = fileURLToPath(
  new URL('../fixtures/trace-replay/azure-llm-inference-conv-2023.head30.csv', import.meta.url),
)

test("the warm-up warms no measured row's prompt: against a prefix cache, each row is prefilled cold", {
  timeout: 120_000,
}, async () => {
  // Azure rows carry no hash ids: no two rows share a prefix, so any cached token is the warm-up's.
  // (The warm-up used to send rows 0..k's own prompts, and those rows were then served from the cache.)
  const starting = startSimulator({
    slots: 16,
    prefill_base_ms: 2,
    prefill_ms_per_token: 0.05,
    decode_base_ms: 1,
    decode_ms_per_seq: 0,
    prompt_counting: 'exact',
    prefix_cache: true,
  })
  const rows = 8
  const replay = {
    flags: {
      trace: AZURE,
      // The second speed replays the same rows: the cache effect the report must then state.
      'trace-speed': '20,40',
      'trace-max-requests': rows,
      warmup: 6,
      'no-server-metrics': true,
    },
    timeoutMs: 100_000,
  } as const
  await withSimRun(starting, replay, ({ out, run: cli }) => {
    assert.equal(cli.code, 0, cli.stderr)
    const records = readRecords(join(out, RECORDS_FILE)).records
    const warmups = records.filter((r) => r.phase === 'warmup')
    assert.equal(warmups.length, 12, 'six warm-up requests per speed')
    assert.ok(
      warmups.every((r) => r.prompt_id >= rows),
      'warm-up sends prompts after the rows',
    )
    const first = records.filter((r) => r.phase === 'measure' && r.level === 20)
    assert.equal(first.length, rows)
    for (const record of first) {
      assert.equal(record.error, null)
      assert.equal(record.cached_tokens, 0, `row ${record.prompt_id}: cached by the warm-up`)
    }
    // The second speed finds every row's prompt cached by the first: said under the table.
    const second = records.filter((r) => r.phase === 'measure' && r.level === 40)
    assert.ok(second.every((r) => (r.cached_tokens ?? 0) >= (r.input_tokens ?? 0) / 2))
    const level = readResult(out).levels[1] as BenchResult['levels'][number]
    assert.equal(level.cache_effect?.at(-1)?.requests, rows)
    const text = cli.stdout + cli.stderr
    assert.match(text, /Warm-up: 6 requests per speed with prompts of their own/)
    assert.match(
      text,
      new RegExp(`speed 40x: prefix cache: ${rows} of ${rows} measured requests found half or more`),
    )
    assert.doesNotMatch(text, /speed 20x: prefix cache/)
  })
})

test('on the wire: each row is one body with its max_tokens, and rows share exactly their hash blocks', {
  timeout: 120_000,
}, async () => {
  const rows = loadTraceFile(MOONCAKE).rows
  const server = await startReplayServer(() => ({
    body: readSseFixture('openai_api_mock_stream.sse'),
    contentType: 'text/event-stream',
  }))
  try {
    const out = tempDir()
    const flags = {
      trace: MOONCAKE,
      'trace-speed': SPEED,
      warmup: 0,
      'no-preflight': true,
      'no-server-metrics': true,
    } as const
    const cli = await runCli(simRunArgs(server.url, out, flags, ['--workers', '2']), { timeoutMs: 100_000 })
    assert.ok(cli.code === 0 || cli.code === 1, cli.stderr)
    const bodies = server.requests as { messages: { content: string }[]; max_tokens: number }[]
    assert.equal(bodies.length, rows.length)
    const tokenizer = loadTokenizer('o200k')
    // Which row a body is: the fixture's input lengths are all different.
    const byLength = new Map(rows.map((row, i) => [row.input_tokens, i]))
    assert.equal(byLength.size, rows.length)
    const sent = bodies.map((body) => {
      const ids = tokenizer.encode(body.messages[0]?.content ?? '')
      const row = byLength.get(ids.length)
      assert.ok(row !== undefined, `a body of ${ids.length} tokens is no row's`)
      assert.equal(body.max_tokens, rows[row]?.output_tokens)
      return { row, ids }
    })
    assert.deepEqual(
      sent.map((s) => s.row).sort((a, b) => a - b),
      rows.map((_, i) => i),
    )
    for (const [a, x] of sent.entries()) {
      for (const y of sent.slice(a + 1)) {
        const [hx, hy] = [rows[x.row]?.hash_ids ?? [], rows[y.row]?.hash_ids ?? []]
        let blocks = 0
        while (blocks < hx.length && blocks < hy.length && hx[blocks] === hy[blocks]) blocks++
        let common = 0
        while (common < x.ids.length && common < y.ids.length && x.ids[common] === y.ids[common]) common++
        // Exactly the shared blocks; a different block can open with the same word (one token) by chance.
        const expected = blocks * MOONCAKE_BLOCK_TOKENS
        assert.ok(common === expected || common === expected + 1, `rows ${x.row}, ${y.row}: ${common} tokens`)
      }
    }
  } finally {
    await server.close()
  }
})

test('a bad trace row stops the run before anything is sent: exit 2, the file and line named', {
  timeout: 60_000,
}, async () => {
  const cases = [
    {
      rows: '{"timestamp": 0, "input_length": 5, "output_length": 2}\n{"timestamp": 1, "input_length": 5\n',
      problem: 'not a JSON object',
    },
    // Before the month's bound this was accepted ("spanning 1e+305 s") and the run waited forever.
    {
      rows: '{"timestamp": 0, "input_length": 5, "output_length": 2}\n{"timestamp": 1e308, "input_length": 5, "output_length": 2}\n',
      problem: "timestamp 1e+305 s after the trace's earliest row; expected a trace spanning at most 31 days",
    },
  ]
  for (const { rows, problem } of cases) {
    const dir = tempDir()
    const trace = join(dir, 'broken.jsonl')
    writeFileSync(trace, rows)
    const out = join(dir, 'out')
    // Port 9 (discard): nothing listens, and nothing may be sent.
    const cli = await runCli(simRunArgs('http://127.0.0.1:9', out, { trace, levels: 2 }), {
      inProcess: true,
      timeoutMs: 30_000,
    })
    assert.equal(cli.code, 2, cli.stderr)
    assert.ok(cli.stderr.includes(`trace ${trace}:2: ${problem}`), cli.stderr)
    assert.match(cli.stderr, /--levels does not apply with --trace/)
    assert.equal(existsSync(out), false)
  }
})
