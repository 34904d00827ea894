import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RecordIntake } from '../../src/run/level/record-intake.js'

/** Holds the thread for `ms`, as counting megabytes of text does. */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {}
}

test('record intake: costly records are completed in turns, and a callback queued meanwhile gets in between', async () => {
  const done: number[] = []
  const intake = new RecordIntake<number>((item) => {
    busy(5)
    done.push(item)
  })
  intake.push(Array.from({ length: 40 }, (_, i) => i))
  // Queued after the 200 ms of work: it must run long before the last record is completed.
  let completedWhenCalled = -1
  setImmediate(() => {
    completedWhenCalled = done.length
  })
  await intake.drained()
  assert.deepEqual(
    done,
    Array.from({ length: 40 }, (_, i) => i),
  )
  assert.ok(completedWhenCalled >= 0 && completedWhenCalled < 40, `ran after ${completedWhenCalled} of 40`)
  assert.equal(intake.pending, 0)
})

test('record intake: drainNow completes what is queued at once; a failure reaches whoever awaits', async () => {
  const done: number[] = []
  const intake = new RecordIntake<number>((item) => {
    if (item < 0) throw new Error(`cannot complete ${item}`)
    done.push(item)
  })
  intake.push([1, 2, 3])
  intake.drainNow()
  assert.deepEqual(done, [1, 2, 3])
  await intake.drained()
  intake.push([4, -1, 5])
  await assert.rejects(intake.drained(), /cannot complete -1/)
  assert.deepEqual(done, [1, 2, 3, 4])
})
