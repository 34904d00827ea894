import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareRuns, DEFAULT_MAX_REGRESSION, type RunRecords } from '../../src/compare/compare.js'
import { seededRandom } from '../../src/random.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

const REQUESTS = 60
const LATE_MS = 2000

/** One level of REQUESTS sequential requests, TTFT about 100 ms; a `lateShare` of them `LATE_MS` later. */
function run(seed: number, lateShare: number): RunRecords {
  const random = seededRandom(seed)
  let clock = 0
  const records = Array.from({ length: REQUESTS }, (_, seq) => {
    const late = lateShare > 0 && seq % Math.round(1 / lateShare) === 0
    const ttft = 100 * (0.8 + 0.4 * random()) + (late ? LATE_MS : 0)
    const times = Array.from({ length: 10 }, (_, k) => clock + ttft + 5 * k)
    const record = makeRecord({ seq, level: 1, sent_at: clock, token_times: times })
    clock = (times.at(-1) as number) + 1
    return record
  })
  const meta = {
    target: { model: 'm', base_url: 'http://x', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 8, output_tokens: 10, stream: true },
    load: { mode: 'concurrency', levels: [1], warmup_requests: 0, requests_per_level: REQUESTS },
    percentiles: [50, 95, 99],
    levels_run: [{ value: 1 }],
  } as unknown as RunMeta
  return { meta, records }
}

test('tail share: a share of late headers fails where p95 cannot gate; an A/A pair does not', () => {
  const late = compareRuns(run(1, 0), run(2, 0.25), DEFAULT_MAX_REGRESSION, { rounds: 200 })
  const ttft = late.levels[0]?.tails.find((tail) => tail.figure === 'ttft')
  assert.ok(ttft !== undefined, JSON.stringify(late.levels[0]?.tails))
  assert.ok(ttft.stands_for.includes('ttft_p95'), JSON.stringify(ttft))
  assert.ok(ttft.regressed && ttft.p_value <= ttft.alpha, JSON.stringify(ttft))
  assert.ok(late.regressions.some((r) => r.metric === 'ttft_tail'))
  assert.equal(late.outcome, 'regression')
  for (const seed of [3, 4, 5]) {
    const same = compareRuns(run(1, 0), run(seed, 0), DEFAULT_MAX_REGRESSION, { rounds: 200 })
    assert.ok(same.levels[0]?.tails.length, 'the tail checks ran')
    assert.ok(
      !same.regressions.some((r) => r.metric.endsWith('_tail')),
      JSON.stringify(same.levels[0]?.tails),
    )
  }
})
