import assert from 'node:assert/strict'
import { test } from 'node:test'
import { resolveWorkers } from '../../src/run/plan/worker-count.js'
import { splitEvenly, splitProportionally } from '../../src/schedule/split.js'

test('splitEvenly: shares differ by at most one, larger first, and add up', () => {
  assert.deepEqual(splitEvenly(10, 3), [4, 3, 3])
  assert.deepEqual(splitEvenly(2, 2), [1, 1])
  assert.deepEqual(splitEvenly(1, 1), [1])
  for (let total = 0; total < 50; total++) {
    for (let parts = 1; parts < 8; parts++) {
      const shares = splitEvenly(total, parts)
      assert.equal(
        shares.reduce((a, b) => a + b, 0),
        total,
      )
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1)
    }
  }
})

test('splitProportionally: exact totals (largest remainder), proportional to the streams', () => {
  assert.deepEqual(splitProportionally(10, [2, 1, 1]), [5, 3, 2])
  assert.deepEqual(splitProportionally(40, [32, 32]), [20, 20])
  assert.deepEqual(splitProportionally(5, [2, 1, 1]), [3, 1, 1])
  assert.deepEqual(splitProportionally(0, [3, 3]), [0, 0])
  for (let total = 0; total < 60; total += 7) {
    assert.equal(
      splitProportionally(total, [5, 4, 4]).reduce((a, b) => a + b, 0),
      total,
    )
  }
})

test('workers: auto is one per core, never more workers than the widest level has streams', () => {
  assert.equal(resolveWorkers('auto', [1, 4, 64], 2), 2)
  assert.equal(resolveWorkers('auto', [1], 8), 1)
  assert.equal(resolveWorkers(4, [1, 2], 8), 2)
  assert.equal(resolveWorkers(3, [16], 2), 3)
})
