// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { loadDataset } from '../../src/workload/dataset.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { waitUntil } from '../helpers/wait.js'

const SHAREGPT = fileURLToPath(new URL('../../datasets/sharegpt-sample.json', import.meta.url))

/** A fast simulator: 5 ms prefill, 2 ms per token, 16 slots; plus the options under test. */
const FAST: SimulatorOptions = {
  slots: 16,
  prefill_base_ms: 5,
  prefill_ms_per_token: 0,
  decode_base_ms: 2,
  decode_ms_per_seq: 0,
}

const run = runToResult

test('calibration: prompts are sized so the server counts exactly the requested input, template included', {
  timeout: 60_000,
}, async () => {
  // The simulator counts o200k tokens and adds 23 for its "chat template".
  const sim = await startSimulator({ ...FAST, prompt_counting: 'exact', template_tokens: 23 })
  try {
    for (const input of [40, 300, 1000]) {
      const out = tempDir()
      const config = testConfig(sim.url, SIM_MODEL, {
        levels: [2],
        requests: 6,
        input_tokens: input,
        out_dir: out,
        calibrate: true,
      })
      const result = await run(config, out)
      const calibration = result.meta.workload.calibration
      assert.ok(calibration != null && 'slope' in calibration, JSON.stringify(calibration))
      assert.equal(calibration.slope, 1)
      assert.equal(calibration.offset, 23)
      assert.deepEqual(calibration.check, { requested: input, server: input })
      const level = result.levels[0]
      assert.equal(level?.input.requested_mean, input)
      assert.equal(level?.input.server_mean, input, `input ${input}: every request counted as requested`)
      const records = readRecords(`${out}/${RECORDS_FILE}`).records
      assert.equal(
        records.filter((r) => r.phase === 'calibration').length,
        3,
        'two probes and a check, recorded',
      )
      assert.ok(records.filter((r) => r.phase === 'measure').every((r) => r.input_tokens === input))
    }
    // Without calibration the template overhead lands on top of every prompt.
    const out = tempDir()
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [2],
      requests: 4,
      input_tokens: 300,
      out_dir: out,
    })
    const result = await run(config, out)
    assert.equal(result.levels[0]?.input.server_mean, 323)
  } finally {
    await sim.close()
  }
})

test('early stops are counted and flagged; ignore_eos makes every output reach max_tokens', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, early_stop: 0.5 })
  try {
    const out = tempDir()
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [4],
      requests: 40,
      output_tokens: 40,
      out_dir: out,
    })
    const early = (await run(config, out)).levels[0]
    assert.ok(early !== undefined)
    assert.ok(
      early.output.stopped_early >= 10 && early.output.stopped_early <= 30,
      `${early.output.stopped_early} of 40`,
    )
    assert.ok((early.output.tokens.min as number) < 40)
    const records = readRecords(`${out}/${RECORDS_FILE}`).records.filter((r) => r.phase === 'measure')
    const stopped = records.filter((r) => r.output_tokens < 40)
    assert.equal(stopped.length, early.output.stopped_early)
    assert.ok(stopped.every((r) => r.finish_reason === 'stop'))
    const out2 = tempDir()
    const eos = testConfig(sim.url, SIM_MODEL, {
      levels: [4],
      requests: 40,
      output_tokens: 40,
      out_dir: out2,
    })
    eos.workload.ignore_eos = true
    const full = (await run(eos, out2)).levels[0]
    assert.equal(full?.output.stopped_early, 0)
    assert.equal(full?.output.tokens.min, 40)
    assert.equal(full?.output.tokens.max, 40)
  } finally {
    await sim.close()
  }
})

test('request-rate mode: a server stall shows in latency from the intended send time, not from the send', {
  timeout: 60_000,
}, async (t) => {
  const sim = await startSimulator(FAST)
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1],
      requests: 60,
      output_tokens: 10,
      out_dir: out,
      preflight: false,
    })
    config.load.mode = 'request_rate'
    config.load.rates = [40]
    config.load.arrival = 'constant'
    // Two requests at most in flight (one per worker thread): a stalled server holds both, and
    // later arrivals wait in the client; their latency from the send would hide that wait.
    config.load.max_in_flight = 2
    config.run.workers = 2
    // Its report.html is read below.
    config.run.charts = true
    const stallMs = 800
    let held = false
    // Stall once the level is well under way: 20 requests done.
    const watcher = setInterval(() => {
      if (!held && sim.stats().completed >= 20) {
        held = true
        sim.hold(stallMs)
      }
    }, 2)
    let result: BenchResult
    try {
      result = await run(config, out)
    } finally {
      clearInterval(watcher)
    }
    assert.ok(held, 'the stall happened')
    const level = result.levels[0]
    assert.ok(level !== undefined && level.ttft_ms_from_intended !== null && level.schedule !== null)
    const show = (d: typeof level.ttft_ms) => `p50 ${d.p50} / p95 ${d.p95} / max ${d.max} ms`
    t.diagnostic(
      `TTFT from send: ${show(level.ttft_ms)}; from intended: ${show(level.ttft_ms_from_intended)}`,
    )
    t.diagnostic(`schedule: ${JSON.stringify(level.schedule)}`)
    assert.equal(level.requests, 60)
    assert.equal(level.schedule.planned, 60)
    assert.equal(level.schedule.sent, 60)
    assert.equal(level.schedule.dropped, 0)
    assert.equal(level.schedule.fell_behind, true, 'flagged')
    const records = readRecords(`${out}/${RECORDS_FILE}`).records.filter((r) => r.phase === 'measure')
    // Requests that waited in the client for the stall: sent well after their intended time.
    const waited = records.filter((r) => r.sent_at - r.scheduled_at > 200)
    assert.ok(waited.length >= 10, `${waited.length} requests waited`)
    for (const r of waited) {
      const fromSend = (r.first_token_at as number) - r.sent_at
      const fromIntended = (r.first_token_at as number) - r.scheduled_at
      assert.ok(fromIntended - fromSend > 200, 'the wait is in the intended-time latency')
    }
    // The ones sent after the stall ended were served at once: their send-time TTFT is small.
    const afterStall = waited.filter((r) => (r.first_token_at as number) - r.sent_at < 100)
    assert.ok(
      afterStall.length >= 5,
      `${afterStall.length} requests with a small send-time TTFT despite waiting`,
    )
    assert.ok(
      (level.ttft_ms_from_intended.max as number) >= stallMs * 0.8,
      `from intended ${JSON.stringify(level.ttft_ms_from_intended)}`,
    )
    assert.ok((level.ttft_ms.p50 as number) < 100, `send-time p50 ${level.ttft_ms.p50}`)
    // The reports say so too: rate on the axis, the intended-time series, the flag.
    const html = readFileSync(join(out, 'report.html'), 'utf8')
    assert.match(html, /request rate \(req\/s\)/)
    assert.match(html, /TTFT p99 from intended/)
    // The stall held the client's two slots: late with connections ready, and ~10x TTFT: the client's schedule, in words.
    assert.match(
      readFileSync(join(out, 'summary.md'), 'utf8'),
      /rate 40\/s: the client fell behind its schedule \(lateness p95 \d+ ms, \d+% of TTFT p50 \d+ ms\): \d+ of 60 requests sent over 20 ms after their intended time with their connection ready \(at most 2 in flight\)/,
    )
    assert.ok((level.ttft_ms_from_intended.p95 as number) > (level.ttft_ms.p95 as number) + 200)
  } finally {
    await sim.close()
  }
})

test('a ShareGPT dataset: real prompts, their own output lengths, requested lengths in every record', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, prompt_counting: 'exact' })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, { levels: [4], requests: 39, out_dir: out })
    config.workload.dataset = SHAREGPT
    config.workload.output = { kind: 'dataset' }
    const result = await run(config, out)
    const tokenizer = loadTokenizer('o200k')
    const dataset = loadDataset(SHAREGPT, (text) => tokenizer.count(text))
    assert.match(result.meta.workload.dataset, /sharegpt-sample\.json \(sharegpt, 39 prompts, 2 skipped\)/)
    const records = readRecords(`${out}/${RECORDS_FILE}`).records.filter((r) => r.phase === 'measure')
    assert.equal(records.length, 39)
    // Each request carries its entry's reference-reply length as max_tokens and got exactly that.
    for (const r of records) {
      const entry = dataset.entries[r.prompt_id % dataset.entries.length]
      assert.equal(r.requested_output_tokens, entry?.output_tokens)
      assert.equal(r.output_tokens, entry?.output_tokens)
    }
    const lengths = new Set(records.map((r) => r.requested_input_tokens))
    assert.ok(lengths.size > 20, 'real conversations vary in length')
  } finally {
    await sim.close()
  }
})

test('timed levels: requests sent in the warm-up and cool-down windows are recorded but not measured', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator(FAST)
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [2],
      duration_s: 1,
      output_tokens: 10,
      out_dir: out,
      preflight: false,
    })
    config.load.warmup_s = 0.5
    config.load.cooldown_s = 0.5
    const result = await run(config, out)
    const records = readRecords(`${out}/${RECORDS_FILE}`).records
    const byPhase = (phase: string) => records.filter((r) => r.phase === phase)
    assert.ok(byPhase('warmup').length >= 5, `${byPhase('warmup').length} warm-up`)
    assert.ok(byPhase('cooldown').length >= 5, `${byPhase('cooldown').length} cool-down`)
    const measured = byPhase('measure')
    assert.equal(result.levels[0]?.requests, measured.length)
    const firstMeasured = Math.min(...measured.map((r) => r.sent_at))
    const lastMeasured = Math.max(...measured.map((r) => r.sent_at))
    assert.ok(byPhase('warmup').every((r) => r.sent_at < firstMeasured))
    assert.ok(byPhase('cooldown').every((r) => r.sent_at > lastMeasured))
    assert.ok(lastMeasured - firstMeasured <= 1000 && lastMeasured - firstMeasured > 800)
  } finally {
    await sim.close()
  }
})

test('request-rate mode stops on Ctrl-C: no new arrivals, the rest counted as dropped, a partial result', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator(FAST)
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1],
      duration_s: 20,
      output_tokens: 10,
      out_dir: out,
      preflight: false,
    })
    config.load.mode = 'request_rate'
    config.load.rates = [20, 40]
    const stop = new StopSignal()
    // Stopped once the load is running (20 requests reached the server), whatever the start-up took.
    let stoppedAt = Number.NaN
    void waitUntil(() => sim.stats().admitted >= 20, '20 requests at the server').then(() => {
      stoppedAt = performance.now()
      stop.request()
    })
    const outcome = await runGradient({ config, apiKey: null, outDir: out, log: () => {}, stop })
    const afterStop = performance.now() - stoppedAt
    assert.equal(outcome.kind, 'done')
    const result = (outcome as Extract<RunOutcome, { kind: 'done' }>).result
    assert.ok(afterStop < 5_000, `ended ${afterStop.toFixed(0)} ms after the stop, not after the 20 s level`)
    assert.equal(result.meta.partial, true)
    assert.deepEqual(
      result.levels.map((l) => l.value),
      [20],
      'the second rate never started',
    )
    const schedule = result.levels[0]?.schedule
    assert.ok(schedule !== null && schedule !== undefined)
    assert.ok(schedule.sent >= 20 && schedule.sent <= 60, `${schedule.sent} sent by a stop after the 20th`)
    assert.equal(schedule.planned - schedule.sent, schedule.dropped, 'every arrival not sent is counted')
    assert.ok(schedule.dropped > 300)
  } finally {
    await sim.close()
  }
})
