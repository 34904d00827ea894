import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_TOTAL_WEIGHT, planTargetSplit, targetOf } from '../../src/schedule/target-split.js'

const counts = (keys: string[]): Map<string, number> => {
  const tally = new Map<string, number>()
  for (const key of keys) tally.set(key, (tally.get(key) ?? 0) + 1)
  return tally
}

test('weights are respected exactly over whole cycles and within one of exact over any run', () => {
  const split = planTargetSplit(
    [
      { value: 'http://a', weight: 1 },
      { value: 'http://b', weight: 3 },
    ],
    [{ value: 'm', weight: 1 }],
    7,
  )
  for (const n of [4, 40, 1000, 1001, 1003]) {
    const tally = counts(Array.from({ length: n }, (_, i) => targetOf(split, i).endpoint))
    const b = tally.get('http://b') ?? 0
    assert.ok(Math.abs(b - (n * 3) / 4) <= 1, `${n} requests: b got ${b}, expected ${(n * 3) / 4}`)
  }
})

test('endpoints and models cross: each endpoint keeps its share whatever the models split', () => {
  const split = planTargetSplit(
    [
      { value: 'A', weight: 2 },
      { value: 'B', weight: 1 },
    ],
    [
      { value: 'x', weight: 1 },
      { value: 'y', weight: 4 },
    ],
    1,
  )
  assert.equal(split.targets.length, 4)
  const n = 15 * 200
  const picks = Array.from({ length: n }, (_, i) => targetOf(split, i))
  const endpoints = counts(picks.map((t) => t.endpoint))
  const models = counts(picks.map((t) => t.model))
  assert.equal(endpoints.get('A'), (n * 2) / 3)
  assert.equal(models.get('y'), (n * 4) / 5)
  const pairs = counts(picks.map((t) => `${t.endpoint}/${t.model}`))
  assert.equal(pairs.get('B/x'), n / 15)
  assert.equal(pairs.get('A/y'), (n * 8) / 15)
})

test('round-robin by default interleaves: equal weights alternate, 2:1 never sends three in a row', () => {
  const even = planTargetSplit(
    [
      { value: 'A', weight: 1 },
      { value: 'B', weight: 1 },
    ],
    [{ value: 'm', weight: 1 }],
    3,
  )
  for (let i = 1; i < 50; i++) {
    assert.notEqual(targetOf(even, i).endpoint, targetOf(even, i - 1).endpoint)
  }
  const twoToOne = planTargetSplit(
    [
      { value: 'A', weight: 2 },
      { value: 'B', weight: 1 },
    ],
    [{ value: 'm', weight: 1 }],
    3,
  )
  const sequence = Array.from({ length: 60 }, (_, i) => targetOf(twoToOne, i).endpoint).join('')
  assert.ok(!sequence.includes('AAA') && !sequence.includes('BB'), sequence)
})

test('deterministic by seed; a different seed may start elsewhere in the cycle', () => {
  const endpoints = [1, 2, 3, 4, 5].map((weight, i) => ({ value: `e${i}`, weight }))
  const models = [{ value: 'm', weight: 1 }]
  const run = (seed: number): string[] =>
    Array.from({ length: 100 }, (_, i) => targetOf(planTargetSplit(endpoints, models, seed), i).endpoint)
  assert.deepEqual(run(42), run(42))
  const starts = new Set(
    Array.from({ length: 20 }, (_, seed) => planTargetSplit(endpoints, models, seed).offset),
  )
  assert.ok(starts.size > 1, 'every seed started on the same request of the cycle')
})

test('weights that are not positive whole numbers, or a cycle too long, are refused', () => {
  const model = [{ value: 'm', weight: 1 }]
  for (const weight of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => planTargetSplit([{ value: 'A', weight }], model, 1), /positive whole number/)
  }
  assert.throws(
    () =>
      planTargetSplit(
        [
          { value: 'A', weight: MAX_TOTAL_WEIGHT },
          { value: 'B', weight: 1 },
        ],
        model,
        1,
      ),
    /at most/,
  )
  // A common factor is divided out: 2000:4000 cycles in 3 requests.
  assert.equal(
    planTargetSplit(
      [
        { value: 'A', weight: 2000 },
        { value: 'B', weight: 4000 },
      ],
      model,
      1,
    ).cycle.length,
    3,
  )
})
