import assert from 'node:assert/strict'
import { test } from 'node:test'
import { contradictedShortfalls, kneeKeptUp } from '../../src/analysis/rate-knee.js'
import type { Saturation } from '../../src/analysis/saturation.js'
import type { OpenLoopFigures } from '../../src/metrics/open-loop-figures.js'

/** A rate's open-loop figures: served as offered (kept up), or short of it with the queue growing. */
function rate(value: number, keptUp: boolean): { value: number; open_loop: OpenLoopFigures } {
  const served = keptUp ? value : value * 0.6
  return {
    value,
    open_loop: {
      window_s: 9,
      arrivals: Math.round(value * 9),
      completions: Math.round(served * 9),
      offered_per_s: value,
      served_per_s: served,
      served_per_s_low: served * 0.9,
      served_per_s_high: keptUp ? value * 1.1 : served * 1.1,
      in_flight_first: 1,
      in_flight_last: keptUp ? 1 : 10,
      in_flight_growth_low: keptUp ? -1 : 2,
      in_flight_growth_high: keptUp ? 1 : 12,
    },
  }
}

const KNEE: Saturation = { value: 8, mode: 'request_rate', reason: 'throughput flat from 8 to 32' }

test('a knee at a rate the server could not keep up with moves below it, bracketed and uncertain (issue 36)', () => {
  const levels = [rate(2, true), rate(8, false), rate(32, false)]
  const moved = kneeKeptUp(KNEE, levels, contradictedShortfalls(levels))
  assert.equal(moved?.value, 2)
  assert.deepEqual(moved?.bracket, [2, 8])
  assert.equal(moved?.confidence, 'uncertain')
  assert.match(moved?.reason ?? '', /at 8 the server could not keep up .*the capacity lies between 2 and 8/)
  // Kept up at the knee: nothing moves. Nothing below kept up: no capacity to name.
  assert.equal(kneeKeptUp(KNEE, [rate(2, true), rate(8, true)], new Set()), KNEE)
  assert.equal(kneeKeptUp(KNEE, [rate(2, false), rate(8, false)], new Set()), null)
})

test('a shortfall below a rate that kept up is contradicted: a short window’s noise, not the server', () => {
  const levels = [rate(2, false), rate(8, true), rate(32, false)]
  assert.deepEqual([...contradictedShortfalls(levels)], [2])
  assert.deepEqual([...contradictedShortfalls([rate(2, true), rate(8, false)])], [])
})
