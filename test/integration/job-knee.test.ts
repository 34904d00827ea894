import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BenchResult } from '../../src/result/bench-result.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const SLOTS = 2

/**
 * The job-level knee where the truth is known: jobs that are chains (one request in flight at a
 * time, no tool wait) against a simulator of SLOTS slots whose decode step does not slow with the
 * batch. Each job in flight holds one slot, so jobs per hour grow up to SLOTS jobs in flight and stop
 * there while the job completion time grows: the knee in jobs is SLOTS.
 */
test('jobs that are chains of one request at a time on a 2-slot simulator: the job knee is at 2', {
  timeout: 180_000,
}, async () => {
  const sim = await startSimulator({
    slots: SLOTS,
    prefill_base_ms: 5,
    prefill_ms_per_token: 0.05,
    decode_base_ms: 4,
    decode_ms_per_seq: 0,
    prefix_cache: true,
  })
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1, 2, 4, 8],
      // 40 jobs of 2 turns per level: enough that a doubling of jobs/h is told from noise.
      requests: 80,
      input_tokens: 40,
      output_tokens: 12,
      out_dir: tempDir(),
    })
    Object.assign(config.workload, { jobs: true, turns: 2, fan_out: 1, tool_wait_s: 0 })
    const outcome: RunOutcome = await runGradient({
      config,
      apiKey: null,
      outDir: config.run.out_dir as string,
      log: () => {},
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
    const { result } = outcome as Extract<RunOutcome, { kind: 'done' }>
    const knee = (result as BenchResult).job_saturation
    const perHour = (result as BenchResult).levels.map((l) => `${l.value}: ${l.jobs?.jobs_per_hour} jobs/h`)
    assert.ok(knee !== undefined, 'a job run has a job knee')
    assert.equal(knee.read_on, 'jobs per hour and JCT p90')
    // The evidence may leave a step unclear on a busy host; then the bracket must hold the truth.
    assert.ok(knee.value !== null, `${knee.reason} (${perHour.join(', ')})`)
    if (knee.confidence === 'clear') assert.equal(knee.value, SLOTS, knee.reason)
    const [low, high] = knee.bracket ?? [Number.NaN, Number.NaN]
    assert.ok(low <= SLOTS && SLOTS <= high, `bracket [${low}, ${high}] holds ${SLOTS}: ${knee.reason}`)
    // The summary says which knee was read on which figures.
    assert.match(result.saturation_summary, /^per request \(output tokens\/s and TTFT\): /)
    assert.match(
      result.saturation_summary,
      /; per job \(jobs per hour and JCT p90\): knee at \d+ jobs in flight/,
    )
    // The headline is the job knee, in jobs.
    assert.equal(result.answer?.value, knee.value)
    assert.match(
      result.answer?.text ?? '',
      /^Capacity: \d+ concurrent jobs \(the knee of jobs per hour and JCT p90/,
    )
  } finally {
    await sim.close()
  }
})
