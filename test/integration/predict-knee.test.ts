import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { predict } from '../../src/model/predict.js'
import { tempDir } from '../helpers/run-config.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/**
 * Issue 39: a prediction and a measurement of the same workload name the same knee. The run places its
 * knee by the server's gauges first (4 slots, requests waiting at 8), then the curve; predict applies
 * that rule to the levels it simulates, not a rule of its own on the flattening of the curve.
 *
 * The run is made in virtual time (test/helpers/virtual-run.ts: the simulator's engine, its /metrics
 * scraped, the calibration probes sent as `--calibrate` sends them), its knee and its model by the
 * same buildResult as `run`: the same on any machine.
 */
test('predict names the knee the run measured, on the workload it measured', () => {
  const result = writeVirtualRun(join(tempDir('llmbench-knee-'), 'run'), {
    // A step that grows nearly in proportion to the batch: throughput gains little per stream up to
    // the slots, so the curve alone would put the knee at 1, while the server still ran every stream
    // it was sent up to 4 (the run's gauges place it there).
    sim: {
      slots: 4,
      prefill_base_ms: 20,
      prefill_ms_per_token: 0.2,
      decode_base_ms: 2,
      decode_ms_per_seq: 10,
    },
    levels: [1, 2, 4, 8],
    requests: 12,
    inputTokens: 128,
    outputTokens: 32,
    seed: 1,
    stagger: true,
    // As capacityGradient: the probes of --calibrate, the gauges scraped every 0.2 s, no drift control.
    calibrate: [16, 256, 128],
    scrapeEveryMs: 200,
    control: false,
  })
  assert.ok(
    result.model !== undefined && result.saturation !== null,
    'the run fitted a model and found a knee',
  )
  const predicted = predict(result.model, {
    input_tokens: 128,
    output_tokens: 32,
    levels: [1, 2, 4, 8],
    slos: [],
    rate: null,
  })
  assert.equal(predicted.knee.value, result.saturation.value, predicted.knee.text)
  assert.equal(predicted.knee.value, 4)
})
