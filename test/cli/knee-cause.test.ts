import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult } from '../helpers/sim-run.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/**
 * A whole run with the simulator's /metrics scraped, made in virtual time (test/helpers/virtual-run.ts:
 * the simulator's engine and its vLLM metrics, scraped as `run` scrapes them), then judged by `llmbench
 * report` from the folder: the knee and its cause read from the records and the server's figures by the
 * same code as after a run, the same on any machine.
 */
test("a whole run against the simulator's /metrics: the knee is explained by the batch slots, where people look", async () => {
  const out = join(tempDir('knee-cause-'), 'run')
  // 4 slots, every token 10 ms whatever the batch: throughput doubles up to 4 streams and stops. From
  // 2 streams: the cause is read at the knee and past it.
  writeVirtualRun(out, {
    sim: { slots: 4, prefill_base_ms: 20, decode_base_ms: 10, decode_ms_per_seq: 0 },
    levels: [2, 4, 8, 16],
    requests: 24,
    inputTokens: 64,
    outputTokens: 24,
    seed: 1,
    scrapeEveryMs: 200,
  })
  // report.html is read: the report is drawn.
  const run = await runCli(['report', out], { charts: true })
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
})
