import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fitLine } from '../../src/model/linear-fit.js'

test('fitLine recovers an exact line, with a zero-width interval', () => {
  const xs = [1, 4, 8, 16]
  const fit = fitLine(
    xs,
    xs.map((x) => 10 + 0.5 * x),
  )
  assert.ok(fit !== null)
  assert.ok(Math.abs(fit.slope - 0.5) < 1e-9)
  assert.ok(Math.abs(fit.intercept - 10) < 1e-9)
  assert.ok(Math.abs((fit.slope_interval.high as number) - 0.5) < 1e-9)
})

test('fitLine: noise widens the interval around the true slope; no spread in x gives null', () => {
  const xs = [1, 2, 4, 8, 16, 32]
  const noise = [0.3, -0.2, 0.1, -0.4, 0.2, 0.1]
  const fit = fitLine(
    xs,
    xs.map((x, i) => 10 + 0.5 * x + (noise[i] as number)),
  )
  assert.ok(fit !== null)
  assert.ok((fit.slope_interval.low as number) < 0.5 && 0.5 < (fit.slope_interval.high as number))
  assert.equal(fitLine([3, 3, 3], [1, 2, 3]), null)
})
