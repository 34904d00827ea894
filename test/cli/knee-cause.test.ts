// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: the knee is placed on a gradient measured on real timers
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startSimulatorProcess } from '../helpers/sim-process.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

test("a whole run against the simulator's /metrics: the knee is explained by the batch slots, where people look", {
  timeout: 180_000,
}, async () => {
  // 4 slots, every token 10 ms whatever the batch: throughput doubles up to 4 streams and stops. From
  // 2 streams (1 before, which took a third of the run): the cause is read at the knee and past it.
  await withSimRun(
    startSimulatorProcess({ slots: 4, prefill_base_ms: 20, decode_base_ms: 10, decode_ms_per_seq: 0 }),
    {
      flags: {
        levels: '2,4,8,16',
        requests: 24,
        warmup: 2,
        'input-tokens': 64,
        'output-tokens': 24,
        'server-metrics-interval': 0.2,
      },
      timeoutMs: 150_000,
      charts: true,
    },
    ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      const result = readResult(out)
      assert.equal(result.saturation?.value, 4, result.saturation_summary)
      assert.deepEqual(
        result.meta.server_metrics,
        { interval_s: 0.2 },
        'the interval the server figures were sampled at',
      )
      assert.equal(result.saturation?.cause?.kind, 'batch-slots', JSON.stringify(result.saturation?.cause))
      assert.match(result.saturation?.cause?.evidence ?? '', /running requests flat at 4/)
      assert.match(run.stdout, /Why: running requests flat at 4 .*Look at: the batch size/)
      assert.match(run.stdout, /server run \/ wait/)
      assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), /Why: running requests flat at 4/)
      assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /Why: running requests flat at 4/)
    },
  )
})
