import assert from 'node:assert/strict'
import { test } from 'node:test'
import { answerOf } from '../../src/analysis/answer.js'
import { betweenRuns, describeKnees } from '../../src/analysis/repeats.js'
import { runsOf, welchChange } from '../../src/compare/between-runs.js'
import { levelSamples, levelThroughput } from '../../src/compare/level-samples.js'
import { meanInterval } from '../../src/metrics/repeat-pool.js'
import { makeRecord } from '../helpers/records.js'

test('between runs: mean, sample SD and the t interval of the mean (t 4.303 at 2 degrees of freedom)', () => {
  const spread = betweenRuns([10, 12, 14])
  assert.deepEqual(spread, { runs: 3, mean: 12, sd: 2, low: 7.031, high: 16.969 })
  assert.equal(betweenRuns([10, null]), null, 'one run is no spread')
  assert.deepEqual(betweenRuns([5, 5])?.sd, 0)
})

test('the knee distribution in words: one place, two places, runs without a knee', () => {
  assert.equal(describeKnees([{ value: 6, runs: 5 }], 5), 'knee 6 in 5 of 5 runs')
  assert.equal(
    describeKnees(
      [
        { value: 6, runs: 3 },
        { value: 8, runs: 2 },
      ],
      5,
    ),
    'knee 6 in 3, 8 in 2 (of 5 runs)',
  )
  assert.equal(
    describeKnees(
      [
        { value: 4, runs: 2 },
        { value: null, runs: 1 },
      ],
      3,
    ),
    'knee 4 in 2, none in 1 (of 3 runs)',
  )
  assert.equal(describeKnees([{ value: null, runs: 3 }], 3), 'no knee in any of 3 runs')
})

test("the mean's within-run interval from the runs' own: narrower by √N for like runs, null when a run has none", () => {
  // Each run: 12 slices, half-width 2.201 × se with se = 1 → the mean of 4 runs: se 0.5, 44 degrees of freedom.
  const run = { low: 100 - 2.201, high: 100 + 2.201, slices: 12 }
  const mean = meanInterval([run, run, run, run])
  assert.ok(mean !== null)
  const half = (mean.high as number) - 100
  assert.ok(Math.abs(half - (1.96 + 2.4 / 44) * 0.5) < 0.01, String(half))
  assert.equal(mean.slices, 48)
  assert.equal(meanInterval([run, null]), null)
})

test("Welch's interval of the change in the mean: a shift beyond the runs' spread excludes 0, one within it does not", () => {
  const slower = welchChange([10, 10.2, 9.9], [20.1, 19.8, 20.3], true)
  assert.ok(slower !== null && slower.low > 0.9 && slower.high < 1.1, JSON.stringify(slower))
  const same = welchChange([10, 10.6, 9.7], [10.3, 9.6, 10.5], true)
  assert.ok(same !== null && same.low < 0 && same.high > 0, JSON.stringify(same))
  // Identical runs on both sides: no spread, the interval is the change itself.
  assert.deepEqual(welchChange([2, 2], [3, 3], false), { base: 2, next: 3, low: 1, high: 1 })
  assert.equal(welchChange([1], [1, 2], true), null, 'one run a side is no basis')
})

test("compare's samples of a repeated level: the runs' windows summed, not the span with the gaps between them", () => {
  // Two runs of one request each, 1 s long with 10 output tokens, 5 s apart.
  const records = [0, 1].map((repeat) =>
    makeRecord({ level: 1, repeat, sent_at: repeat * 6000, end_at: repeat * 6000 + 1000, output_tokens: 10 }),
  )
  const samples = levelSamples(records, 1)
  assert.equal(samples.windowS, 2)
  assert.equal(levelThroughput(samples), 10)
  assert.deepEqual(
    runsOf(records).map((run) => run.map((record) => record.repeat)),
    [[0], [1]],
  )
  assert.deepEqual(runsOf([makeRecord({ level: 1 })]), [], 'records without runs are no repeats')
})

test('--repeat whose runs placed the knee at 6, 6 and 8 headlines 6, hedged with the spread, not the pooled 8 (issue 36)', () => {
  const meta = { load: { mode: 'concurrency', levels: [4, 6, 8, 12] } } as never
  const repeats = {
    count: 3,
    knee_distribution: [
      { value: 6, runs: 2 },
      { value: 8, runs: 1 },
    ],
  } as never
  const judged = {
    meta,
    saturation: { value: 8, mode: 'concurrency', reason: 'x', confidence: 'clear' },
    saturation_summary: 'knee at 8',
    capacity: null,
    capacity_summary: null,
    repeats,
  } as never
  const answer = answerOf(judged)
  assert.equal(answer.value, 6)
  assert.equal(answer.confidence, 'uncertain')
  assert.match(
    answer.text,
    /^Capacity: 6 concurrent streams \(the knee in 2 of 3 runs, uncertain: between 6 and 8; the runs pooled place it at 8\)$/,
  )
  // Every run at the pooled knee: the plain headline.
  const agreed = {
    ...(judged as object),
    repeats: { count: 3, knee_distribution: [{ value: 8, runs: 3 }] },
  } as never
  assert.equal(answerOf(agreed).text, 'Capacity: 8 concurrent streams (the knee)')
})
