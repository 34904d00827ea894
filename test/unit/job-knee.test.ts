import assert from 'node:assert/strict'
import { test } from 'node:test'
import { describeJobSaturation, findJobSaturation, type JobLevel } from '../../src/analysis/job-knee.js'
import type { JobFigures } from '../../src/metrics/job-figures.js'

/** A level of `complete` jobs at `perHour`, JCT p50 in [low, high]; the rate's interval as given (undefined = an older result). */
function level(
  value: number,
  complete: number,
  perHour: number,
  jct: [number, number, number],
  rate?: { low: number; high: number },
): JobLevel {
  const [p50, low, high] = jct
  const jobs: Partial<JobFigures> = {
    complete,
    incomplete: 0,
    jobs_per_hour: perHour,
    jct_p50_ms: p50,
    jct_p90_ms: p50 * 1.2,
    jct_ms_intervals: { p50: { low, high }, p90: { low: p50, high: null } },
    ...(rate === undefined ? {} : { jobs_per_hour_interval: rate }),
  }
  return { value, success_rate: 1, jobs: jobs as JobFigures }
}

/** ± a relative half-width on the log scale. */
const around = (perHour: number, half: number) => ({
  low: perHour * Math.exp(-half),
  high: perHour * Math.exp(half),
})

test('jobs/h 1027, 862, 1026 at 12 jobs a level (llama.cpp, 3 slots): the knee is uncertain, not invented', () => {
  const noisy = [
    level(2, 12, 1027, [7000, 6000, 8200]),
    level(3, 12, 862, [12500, 11000, 14000]),
    level(4, 12, 1026, [14000, 12500, 16000]),
  ]
  // An older result (no interval of its own: a Poisson count's) and one with a closed loop's interval
  // for a JCT spread of 30% (half-width 1.96·√(0.09/12 + 1/144)).
  const closedLoop = noisy.map((l) => {
    const perHour = l.jobs?.jobs_per_hour as number
    return {
      ...l,
      jobs: {
        ...l.jobs,
        jobs_per_hour_interval: around(perHour, 1.96 * Math.sqrt(0.09 / 12 + 1 / 144)),
      } as JobFigures,
    }
  })
  for (const levels of [noisy, closedLoop]) {
    const knee = findJobSaturation(levels)
    assert.ok(knee !== null)
    assert.equal(knee.read_on, 'jobs per hour and JCT p90')
    if (knee.value !== null) {
      assert.equal(knee.confidence, 'uncertain', knee.reason)
      assert.ok(knee.bracket !== null && knee.bracket[0] < knee.bracket[1])
      assert.match(
        describeJobSaturation(knee),
        /^per job \(jobs per hour and JCT p90\): knee at \d+ jobs in flight \(uncertain: between \d+ and \d+\): jobs per hour /,
      )
    } else assert.match(knee.reason, /no clear knee|still grew/)
    assert.doesNotMatch(knee.reason, /throughput|TTFT/, 'in the words of jobs')
  }
})

test('a tight gradient: jobs/h doubles to 2 then holds while JCT doubles: a clear knee at 2', () => {
  const tight = 0.05
  const knee = findJobSaturation([
    level(1, 40, 3600, [1000, 980, 1020], around(3600, tight)),
    level(2, 80, 7200, [1000, 980, 1020], around(7200, tight)),
    level(4, 80, 7200, [2000, 1960, 2040], around(7200, tight)),
    level(8, 80, 7150, [4000, 3920, 4080], around(7150, tight)),
  ])
  assert.equal(knee?.value, 2, knee?.reason)
  assert.equal(knee?.confidence, 'clear')
  assert.deepEqual(knee?.bracket, [2, 4])
})

test('still growing, or not a job run: no knee', () => {
  const growing = findJobSaturation([
    level(1, 40, 3600, [1000, 980, 1020], around(3600, 0.05)),
    level(2, 80, 7200, [1000, 980, 1020], around(7200, 0.05)),
  ])
  assert.equal(growing?.value, null)
  assert.match(growing?.reason ?? '', /still grew up to 2/)
  assert.equal(
    findJobSaturation([
      { value: 1, success_rate: 1 },
      { value: 2, success_rate: 1 },
    ]),
    null,
  )
})
