import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  DEFAULT_STAGGER_MS,
  MAX_STAGGER_MS,
  staggeredStarts,
  staggerSpreadMs,
} from '../../src/schedule/stagger.js'

test('staggered starts: each stream in its own slice of the spread, no two closer than half a slice', () => {
  const spread = 1000
  for (const streams of [2, 5, 8, 64]) {
    const starts = [...staggeredStarts(streams, spread, 7)]
    const slice = spread / streams
    starts.forEach((start, i) => {
      assert.ok(start >= i * slice && start < (i + 0.5) * slice, `stream ${i} of ${streams} at ${start}`)
    })
    for (let i = 1; i < starts.length; i++)
      assert.ok((starts[i] as number) - (starts[i - 1] as number) > slice / 2, `gap ${i} of ${streams}`)
  }
})

test('staggered starts are seeded: the same seed the same starts, another seed others; one stream starts at once', () => {
  assert.deepEqual(staggeredStarts(5, 800, 3), staggeredStarts(5, 800, 3))
  assert.notDeepEqual(staggeredStarts(5, 800, 3), staggeredStarts(5, 800, 4))
  assert.deepEqual([...staggeredStarts(1, 800, 3)], [0])
  assert.deepEqual([...staggeredStarts(4, 0, 3)], [0, 0, 0, 0])
})

test("the spread: three quarters of one request's projected time, a default without one, capped for long requests and timed levels", () => {
  assert.equal(staggerSpreadMs(1234.4, null), 926)
  assert.equal(staggerSpreadMs(null, null), DEFAULT_STAGGER_MS)
  assert.equal(staggerSpreadMs(Number.NaN, null), DEFAULT_STAGGER_MS)
  assert.equal(staggerSpreadMs(600_000, null), MAX_STAGGER_MS)
  // A 10-second timed level spends at most a tenth of it starting its streams.
  assert.equal(staggerSpreadMs(5000, 10), 1000)
})
