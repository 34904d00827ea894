// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

test('worker threads share the main thread clock: a worker stamp falls inside the main send/receive window', async () => {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', () => parentPort.postMessage(performance.now()))",
    { eval: true },
  )
  try {
    for (let i = 0; i < 20; i++) {
      const before = performance.now()
      const stamp = await new Promise<number>((resolve) => {
        worker.once('message', resolve)
        worker.postMessage('now?')
      })
      const after = performance.now()
      assert.ok(stamp >= before && stamp <= after, `worker ${stamp} outside [${before}, ${after}]`)
    }
  } finally {
    await worker.terminate()
  }
})

/**
 * The same level on 1 and on 3 workers: every request is issued exactly once, spread over the
 * workers, and the figures match what the simulator (in its own process) was told and says it did: the first
 * token the server's own prefill (50 ms a prompt) after the request, then one every 15 ms (tolerance as in run-simulator.test.ts: timers
 * fire up to ~2 ms early against a fresh clock reading — 1.2 ms seen in a full CI run — and a few
 * ms late under load).
 */
for (const workers of [1, 3]) {
  test(`workers=${workers}: exact request count, spread over the workers, figures as the simulator was told`, {
    timeout: 60_000,
  }, async () => {
    const sim = await startSimulatorProcess(
      {
        slots: 16,
        prefill_base_ms: 50,
        prefill_ms_per_token: 0,
        decode_base_ms: 15,
        decode_ms_per_seq: 0,
      },
      { args: ['--timings'] },
    )
    const out = tempDir()
    try {
      const config = testConfig(sim.url, SIM_MODEL, {
        levels: [4],
        requests: 10,
        output_tokens: 10,
        warmup: 3,
        out_dir: out,
      })
      config.run.workers = workers
      const outcome = await runGradient({
        config,
        apiKey: null,
        outDir: out,
        log: () => {},
        stop: new StopSignal(),
      })
      assert.equal(outcome.kind, 'done')
      const level = (outcome as { result: BenchResult }).result.levels[0] as BenchResult['levels'][0]
      assert.equal(level.requests, 10)
      assert.equal(level.ok, 10)
      // No first token before the prefill it was told; prompts arriving within one decode step share
      // a step that costs the sum of their prefills (src/model/engine.ts), which its timings say: the
      // client's TTFT is the server's prefill plus the way there and back, whatever the prefill was.
      assert.ok((level.ttft_ms.min as number) >= 48, `TTFT ${JSON.stringify(level.ttft_ms)}`)
      const inBand = level.in_band
      assert.ok(inBand != null && (inBand.server_prefill_ms.min as number) >= 49.5, JSON.stringify(inBand))
      assert.ok(
        (inBand.queue_ms.p50 as number) <= 12,
        `TTFT − server prefill ${JSON.stringify(inBand.queue_ms)}`,
      )
      assert.ok(
        (level.tpot_ms.mean as number) >= 14.5 && (level.tpot_ms.mean as number) <= 18,
        `TPOT ${JSON.stringify(level.tpot_ms)}`,
      )
      assert.equal(level.client.bound, false, level.client.reasons.join())
      const records = readRecords(`${out}/requests.jsonl`).records.filter((r) => r.phase !== 'preflight')
      const measured = records.filter((r) => r.phase === 'measure')
      assert.equal(records.filter((r) => r.phase === 'warmup').length, 3)
      const perWorker = Array.from(
        { length: workers },
        (_, w) => measured.filter((r) => r.worker === w).length,
      )
      // 4 streams over 3 workers are [2, 1, 1]; 10 requests split in proportion: [5, 3, 2].
      assert.deepEqual(perWorker, workers === 1 ? [10] : [5, 3, 2])
      assert.equal(new Set(measured.map((r) => r.prompt_id)).size, 10, 'every request has its own prompt')
      const { meta } = (outcome as { result: BenchResult }).result
      assert.equal(meta.client.workers, workers)
      assert.deepEqual(
        meta.levels_run[0]?.client.loops.map((loop) => loop.thread).sort(),
        [...Array.from({ length: workers }, (_, w) => `worker-${w}`), 'main'].sort(),
      )
    } finally {
      await sim.close()
    }
  })
}
