import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pairedChange } from '../../src/compare/between-runs.js'
import {
  blockRequests,
  describeOrder,
  PAIRS_PER_LEVEL,
  pairedOrder,
} from '../../src/run/plan/paired-blocks.js'

test('pairedOrder: every pair one A block and one B block, adjacent; balanced firsts; seeded; varies by level', () => {
  const orders = new Set<string>()
  for (let level = 0; level < 20; level++) {
    const blocks = pairedOrder(42, level)
    assert.equal(blocks.length, 2 * PAIRS_PER_LEVEL)
    for (let pair = 0; pair < PAIRS_PER_LEVEL; pair++) {
      const [first, second] = [blocks[2 * pair], blocks[2 * pair + 1]]
      assert.equal(first?.pair, pair)
      assert.equal(second?.pair, pair)
      assert.notEqual(first?.target, second?.target)
    }
    // As many pairs begin with A as with B: neither target is always first.
    assert.equal(blocks.filter((block, i) => i % 2 === 0 && block.target === 0).length, PAIRS_PER_LEVEL / 2)
    assert.deepEqual(pairedOrder(42, level), blocks, 'the same seed and level give the same order')
    orders.add(describeOrder(blocks))
  }
  assert.ok(orders.size > 1, 'the order is randomized between levels')
  assert.match(describeOrder(pairedOrder(1, 0)), /^(AB|BA)( (AB|BA)){3}$/)
})

test('blockRequests: the level cut in pairs, at least two rounds of its streams per block', () => {
  assert.equal(blockRequests(100, 4), 25)
  assert.equal(blockRequests(32, 8), 16)
})

test('pairedChange: a drift that hits both sides of each pair cancels; Welch-style pooling would not', () => {
  // B is 10% slower than A in every pair, while the host drifts from 100 to 200 over the run.
  const pairs: [number, number][] = [100, 130, 160, 200].map((a) => [a, a * 1.1])
  const change = pairedChange(pairs, true)
  assert.ok(change !== null)
  const mean = (change.low + change.high) / 2
  assert.ok(Math.abs(mean - 0.1) < 0.001, `${mean}`)
  // The interval is narrow enough to say B is worse: its whole width above zero.
  assert.ok(change.low > 0, `${change.low}`)
  assert.equal(pairedChange(pairs.slice(0, 1), true), null, 'one pair has no spread')
})
