import assert from 'node:assert/strict'
import { test } from 'node:test'
import { accumulate } from '../../src/metrics/accumulator.js'
import { jobAccumulator } from '../../src/metrics/job-figures.js'
import { evaluateSlos, toSlos } from '../../src/metrics/slo.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

/** One turn's record: sent and ended at the given ms, first token 5 ms after the send. */
function turn(
  job: string,
  index: number,
  parents: number[],
  depth: number,
  sent: number,
  end: number,
  extra: Partial<RequestRecord> = {},
): RequestRecord {
  return makeRecord({
    sent_at: sent,
    scheduled_at: sent,
    first_token_at: sent + 5 + depth * 10,
    end_at: end,
    job,
    turn: index,
    job_parents: parents,
    job_depth: depth,
    job_turns: 4,
    input_tokens: 100 * (depth + 1),
    cached_tokens: 50 * (depth + 1),
    output_tokens: 10,
    ...extra,
  })
}

/**
 * Job a: plan 0–100, tool wait to 300, branches 300–400 and 300–700, tool waits, join 900–1000.
 * JCT 1000 ms; without tools the critical path is 100 + 400 + 100 = 600 ms.
 * Job b: the same shape twice as fast (JCT 500, critical path 300).
 */
const JOB_A = [
  turn('a', 0, [], 0, 0, 100),
  turn('a', 1, [0], 1, 300, 400),
  turn('a', 2, [0], 1, 300, 700),
  turn('a', 3, [1, 2], 2, 900, 1000),
]
const JOB_B = [
  turn('b', 0, [], 0, 2000, 2050),
  turn('b', 1, [0], 1, 2150, 2200),
  turn('b', 2, [0], 1, 2150, 2350),
  turn('b', 3, [1, 2], 2, 2450, 2500),
]

test('job completion time with and without tool waits, tokens per job and jobs per hour, from the records', () => {
  const figures = accumulate(
    [...JOB_A, ...JOB_B],
    jobAccumulator(() => 3.6),
  )
  assert.ok(figures !== null)
  assert.equal(figures.complete, 2)
  assert.equal(figures.incomplete, 0)
  // Two samples: p50 is the lower by interpolation's midpoint, p90 near the higher.
  assert.ok(figures.jct_p50_ms !== null && figures.jct_p50_ms >= 500 && figures.jct_p50_ms <= 1000)
  assert.ok(
    figures.jct_p90_ms !== null && figures.jct_p90_ms > figures.jct_p50_ms && figures.jct_p90_ms <= 1000,
  )
  const alone = accumulate(
    JOB_A,
    jobAccumulator(() => 3.6),
  )
  assert.equal(alone?.jct_p50_ms, 1000)
  assert.equal(alone?.jct_without_tools_p50_ms, 600)
  assert.equal(
    accumulate(
      JOB_B,
      jobAccumulator(() => 1),
    )?.jct_without_tools_p50_ms,
    300,
  )
  // Prompt tokens 100 + 200 + 200 + 300 per job, outputs 4 × 10; 2 jobs in 3.6 s = 2000 per hour.
  assert.equal(figures.input_tokens_per_job, 800)
  assert.equal(figures.output_tokens_per_job, 40)
  assert.equal(figures.jobs_per_hour, 2000)
  assert.deepEqual(
    figures.by_depth.map((d) => [d.depth, d.requests, d.ttft_p50_ms, d.cached_share]),
    [
      [0, 2, 5, 0.5],
      [1, 4, 15, 0.5],
      [2, 2, 25, 0.5],
    ],
  )
})

test('a job with a failed or missing turn is counted as incomplete, not timed', () => {
  const failed = JOB_B.map((r) =>
    r.turn === 1 ? { ...r, error: { class: 'http_5xx' as const, message: 'boom' }, status: 500 } : r,
  )
  const cut = JOB_A.slice(0, 3)
  const figures = accumulate(
    [...failed, ...cut],
    jobAccumulator(() => 1),
  )
  assert.equal(figures?.complete, 0)
  assert.equal(figures?.incomplete, 2)
  assert.equal(figures?.jct_p50_ms, null)
  // A retry that succeeds makes the turn whole again: its time runs from the first attempt's send.
  const retried = [
    ...JOB_B,
    {
      ...(JOB_B[1] as RequestRecord),
      end_at: 2180,
      error: { class: 'http_5xx' as const, message: 'x' },
      status: 500,
    },
  ]
  const again = accumulate(
    retried,
    jobAccumulator(() => 1),
  )
  assert.equal(again?.complete, 1)
  assert.equal(again?.jct_p50_ms, 500)
  assert.equal(
    accumulate(
      [makeRecord({})],
      jobAccumulator(() => 1),
    ),
    null,
    'no job, no figures',
  )
})

test('an SLO on job completion time: met or missed by the jobs, a failed job counting as the timeout per turn', () => {
  // JCTs 1000 and 500 ms: p50 750 by interpolation.
  const slos = toSlos({ jct_p50_ms: 800 })
  const met = evaluateSlos([...JOB_A, ...JOB_B], slos, 10_000, 1)
  assert.deepEqual(
    met.checks.map((c) => [c.key, c.value_ms, c.met]),
    [['jct_p50_ms', 750, true]],
  )
  assert.equal(met.meets, true)
  // Every request is good: a job objective does not judge requests one by one.
  assert.equal(met.good_share, 1)
  assert.equal(evaluateSlos([...JOB_A, ...JOB_B], toSlos({ jct_p50_ms: 700 }), 10_000, 1).meets, false)
  // Job b fails a turn: it counts as 4 turns × the 10 s timeout, and the p50 jumps past any threshold.
  const failed = JOB_B.map((r) =>
    r.turn === 2 ? { ...r, error: { class: 'http_5xx' as const, message: 'boom' }, status: 500 } : r,
  )
  const missed = evaluateSlos([...JOB_A, ...failed], slos, 10_000, 1)
  assert.equal(missed.checks[0]?.value_ms, 20_500)
  assert.equal(missed.meets, false)
})
