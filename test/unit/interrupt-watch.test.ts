import assert from 'node:assert/strict'
import { test } from 'node:test'
import { stopWatching, watchInterrupt } from '../../src/client/interrupt-watch.js'

test('an interrupt cuts the requests still watching it, once each, and only those', () => {
  const controller = new AbortController()
  const cut: string[] = []
  const first = (): void => void cut.push('first')
  const settled = (): void => void cut.push('settled')
  const last = (): void => void cut.push('last')
  watchInterrupt(controller.signal, first)
  watchInterrupt(controller.signal, settled)
  watchInterrupt(controller.signal, last)
  stopWatching(controller.signal, settled)
  controller.abort(new Error('stop'))
  controller.abort(new Error('again'))
  assert.deepEqual(cut, ['first', 'last'])
})

test('a cut that settles another request while the interrupt runs does not break the loop', () => {
  const controller = new AbortController()
  const cut: string[] = []
  const second = (): void => void cut.push('second')
  watchInterrupt(controller.signal, () => {
    cut.push('first')
    stopWatching(controller.signal, second)
  })
  watchInterrupt(controller.signal, second)
  controller.abort()
  // A snapshot is cut: the second was in flight when Ctrl-C's grace ended, so it is cut too.
  assert.deepEqual(cut, ['first', 'second'])
})
