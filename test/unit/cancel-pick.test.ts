import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cancelAfterEvents } from '../../src/schedule/cancel-pick.js'

test('the share of requests picked for cancelling holds within one over any run of a thread', () => {
  for (const share of [0.1, 0.2, 0.5, 0.9]) {
    for (const worker of [0, 1, 5]) {
      const plan = { share, after_events: 3 }
      for (const length of [10, 37, 400]) {
        const first = 100 * worker + 7
        let picked = 0
        for (let seq = first; seq < first + length; seq++) {
          const after = cancelAfterEvents(plan, worker, seq)
          if (after !== null) {
            picked++
            assert.equal(after, 3)
          }
        }
        assert.ok(
          Math.abs(picked - share * length) <= 2,
          `share ${share}, thread ${worker}, ${length} requests: ${picked} picked`,
        )
      }
    }
  }
})

test('no plan, a share of 0: nothing cancelled; a share of 1: everything', () => {
  for (let seq = 0; seq < 50; seq++) {
    assert.equal(cancelAfterEvents(undefined, 0, seq), null)
    assert.equal(cancelAfterEvents({ share: 0, after_events: 1 }, 0, seq), null)
    assert.equal(cancelAfterEvents({ share: 1, after_events: 1 }, 2, seq), 1)
  }
})

test('threads do not cancel in step: their picks differ', () => {
  const plan = { share: 0.3, after_events: 1 }
  const picks = (worker: number) =>
    Array.from({ length: 20 }, (_, seq) => cancelAfterEvents(plan, worker, seq) !== null)
  assert.notDeepEqual(picks(0), picks(1))
})
