import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeFit } from '../../src/model/decode-fit.js'
import { SIM_DEFAULTS } from '../../src/model/engine.js'

test('decodeFit recovers the simulator decode_base_ms and decode_ms_per_seq within 5%', () => {
  const { decode_base_ms: base, decode_ms_per_seq: perSeq, slots } = SIM_DEFAULTS
  const levels = [1, 4, 8, 16, 32, 64]
  const fit = decodeFit(
    levels.map((c) => ({ tpotMs: base + perSeq * Math.min(c, slots), running: null, inFlight: c })),
    slots,
  )
  assert.ok(fit !== null)
  assert.ok(Math.abs(fit.intercept - base) / base < 0.05)
  assert.ok(Math.abs(fit.slope - perSeq) / perSeq < 0.05)
})
