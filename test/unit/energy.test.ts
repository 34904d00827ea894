import assert from 'node:assert/strict'
import { test } from 'node:test'
import { joulesPerOutputToken } from '../../src/server-metrics/energy.js'

test('energy per output token: mean GPU power over the measured window, over its output tokens', () => {
  // 300 W for 10 s is 3000 J, over 1500 tokens: 2 J per token.
  const power = { gpu_power_watts: { mean: 300, max: 350 }, gpu_energy_joules: 9999, span_s: 12 }
  assert.equal(joulesPerOutputToken(power, 1500, 10), 2)
})

test('energy per output token from the energy counter (already over the window) without a power gauge', () => {
  // 3000 J counted over the measured window (windowIncrease), over 1000 tokens.
  const counter = { gpu_power_watts: null, gpu_energy_joules: 3000, span_s: 12 }
  assert.equal(joulesPerOutputToken(counter, 1000, 10), 3)
})

test('no GPU figures or no output: no energy figure, never a division by zero', () => {
  const none = { gpu_power_watts: null, gpu_energy_joules: null, span_s: 12 }
  assert.equal(joulesPerOutputToken(none, 1000, 10), null)
  assert.equal(joulesPerOutputToken({ ...none, gpu_power_watts: { mean: 300, max: 300 } }, 0, 10), null)
})
