import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RequestRecord } from '../../src/records/types.js'
import { branchRows, jobTimelines } from '../../src/report/job-timeline.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { makeRecord } from '../helpers/records.js'

/** A turn of a 4-turn fan-out job (plan, two branches, join) at `level`, scaled by `slow`. */
function fanOutJob(job: string, level: number, start: number, slow: number): RequestRecord[] {
  const turns: [number, number[], number, number][] = [
    [0, [], 0, 100],
    [1, [0], 300, 400],
    [2, [0], 300, 700],
    [3, [1, 2], 900, 1000],
  ]
  return turns.map(([turn, parents, sent, end]) =>
    makeRecord({
      level,
      sent_at: start + sent * slow,
      first_token_at: start + (sent + 10) * slow,
      end_at: start + end * slow,
      job,
      turn,
      job_parents: parents,
      job_turns: 4,
      tool_wait_ms: 50,
    }),
  )
}

function result(levels: number[], knee: number | null): BenchResult {
  return {
    meta: { load: { mode: 'concurrency' } },
    levels: levels.map((value) => ({ value, jobs: { complete: 1 } })),
    saturation: knee === null ? null : { value: knee },
  } as unknown as BenchResult
}

test('a chain stays on one row, a fan-out opens a row per extra branch, a join continues a branch', () => {
  const parents = [[], [0], [0], [0], [1, 2], [4], []]
  assert.deepEqual(
    branchRows(parents.map((p, turn) => ({ turn, parents: p }))),
    // 0 on row 0; 1 continues it; 2 and 3 are new branches; the join 4 continues its first parent
    // (1, row 0); 5 continues 4; a second root opens a row.
    [0, 0, 1, 2, 0, 0, 3],
  )
})

test("the knee's level, its p90 and median jobs, each turn on the job's own clock with retries folded", () => {
  // Ten jobs at c=4, the k-th k times as slow; a few at c=2, which is not drawn.
  const records = [
    ...Array.from({ length: 10 }, (_, k) => fanOutJob(`j${k + 1}`, 4, k * 20_000, k + 1)).flat(),
    ...fanOutJob('low', 2, 0, 1),
  ]
  // j1's branch 2 failed once, then its retry answered: the turn runs from the first send to the retry's end.
  records.push(
    makeRecord({
      level: 4,
      sent_at: 250,
      first_token_at: null,
      end_at: 260,
      job: 'j1',
      turn: 2,
      job_parents: [0],
      job_turns: 4,
      error: { class: 'http_5xx', message: 'x' },
    } as Partial<RequestRecord>),
  )
  // An incomplete job (no join) is not ranked, however slow.
  records.push(...fanOutJob('cut', 4, 500_000, 50).slice(0, 3))
  const [slow, typical] = jobTimelines(result([2, 4], 4), records)
  assert.ok(slow !== undefined && typical !== undefined)
  assert.equal(slow.rank, 'p90')
  assert.equal(typical.rank, 'p50')
  assert.equal(slow.level, 4)
  assert.equal(slow.knee, true)
  assert.equal(slow.jobs, 10)
  // p90 over JCTs 1000..10000 interpolates to 9100 ms: j9 (9000) is the nearest real job; the median
  // 5500 is as near j5 as j6, and the first found (the faster) is kept.
  assert.equal(slow.job, 'j9')
  assert.equal(slow.jct_ms, 9000)
  assert.equal(typical.job, 'j5')
  assert.deepEqual(
    slow.turns.map((t) => [t.turn, t.row, t.sent, t.end]),
    [
      [0, 0, 0, 900],
      [1, 0, 2700, 3600],
      [2, 1, 2700, 6300],
      [3, 0, 8100, 9000],
    ],
  )
  assert.equal(slow.rows, 2)
  const retried = jobTimelines(
    result([4], null),
    records.filter((r) => r.job === 'j1'),
  )[0]
  assert.deepEqual(
    retried?.turns.find((t) => t.turn === 2),
    { turn: 2, row: 1, sent: 250, first_token: 310, end: 700, outcome: 'ok', tool_wait_ms: 50 },
  )
})

test('no knee: the highest level with complete jobs; no job at all: nothing drawn', () => {
  const records = [...fanOutJob('a', 1, 0, 1), ...fanOutJob('b', 8, 0, 2)]
  assert.deepEqual(
    jobTimelines(result([1, 8], null), records).map((j) => [j.rank, j.level, j.job]),
    [
      ['p90', 8, 'b'],
      ['p50', 8, 'b'],
    ],
  )
  const plain = [makeRecord({ level: 1 })]
  assert.deepEqual(
    jobTimelines({ ...result([1], null), levels: [{ value: 1 }] } as unknown as BenchResult, plain),
    [],
  )
})
