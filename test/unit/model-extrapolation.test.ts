import assert from 'node:assert/strict'
import { test } from 'node:test'
import { virtualRecords } from '../../bench/model/virtual-run.js'
import { resolveSimParams, type SimParams } from '../../src/model/engine.js'
import { ModelEvidence } from '../../src/model/evidence.js'
import { type FitInput, fitCapacity } from '../../src/model/fit.js'
import { fitLeastSquares } from '../../src/model/least-squares.js'
import { predict } from '../../src/model/predict.js'
import type { PrefillPoint } from '../../src/model/prefill-evidence.js'

/** A deterministic ±2% wobble, as a busy server's timings have: no Math.random in tests. */
const wobble = (i: number) => 1 + 0.02 * Math.sin(i * 2.399)

function prefillPoints(lengths: readonly number[], ms: (tokens: number) => number): PrefillPoint[] {
  return lengths.flatMap((tokens, j) =>
    [0, 1, 2].map((r) => ({ tokens, ms: ms(tokens) * wobble(3 * j + r) })),
  )
}

function fitOn(prefill: readonly PrefillPoint[], decode: FitInput['decode'] = { overlap: [], stall: [] }) {
  return modelOn(prefill, decode).parameters
}

function modelOn(prefill: readonly PrefillPoint[], decode: FitInput['decode']) {
  return fitCapacity({
    prefill: { points: prefill, source: 'timings' },
    decode,
    levels: [],
    mode: 'request_rate',
    server: { engine: 'vllm', slots: 4, context_per_slot: 8192 },
    knee: null,
    workload: { input_tokens: 256, output_tokens: 64 },
  })
}

test('fitLeastSquares recovers the coefficients of an exact plane, with intervals around them', () => {
  const rows = [1, 2, 3, 4, 5, 6].flatMap((a) => [10, 40, 90].map((b) => [1, a, b]))
  const ys = rows.map((row, i) => (3 + 2 * (row[1] as number) + 0.5 * (row[2] as number)) * wobble(i))
  const fit = fitLeastSquares(rows, ys)
  assert.ok(fit !== null)
  const [c0, c1, c2] = fit.coefficients as [number, number, number]
  assert.ok(Math.abs(c1 - 2) < 0.2 && Math.abs(c2 - 0.5) < 0.02, `got ${fit.coefficients}`)
  assert.ok(Math.abs(c0 - 3) < 1.5)
  for (const [j, truth] of [2, 0.5].entries()) {
    const interval = fit.intervals[j + 1] as { low: number; high: number }
    assert.ok(interval.low < truth && truth < interval.high, `interval ${j + 1}: ${JSON.stringify(interval)}`)
  }
  assert.equal(
    fitLeastSquares(
      [
        [1, 2],
        [2, 4],
        [3, 6],
      ],
      [1, 2, 3],
    ),
    null,
    'collinear columns: no fit',
  )
})

test('prefill: a square term is recovered when long prompts show attention cost', () => {
  const truth = (t: number) => 20 + 0.5 * t + 1e-4 * t * t
  const p = fitOn(prefillPoints([64, 256, 512, 1024, 2048, 4096], truth))
  const sq = p.prefill_ms_per_token_sq
  assert.ok(sq !== undefined && sq.low !== null && sq.high !== null)
  assert.ok(Math.abs(sq.value / 1e-4 - 1) < 0.15, `square ${sq.value}`)
  assert.ok(sq.low > 0 && sq.low <= 1e-4 && sq.high >= 1e-4, `interval ${sq.low}…${sq.high}`)
  assert.ok(
    Math.abs(p.prefill_ms_per_token.value / 0.5 - 1) < 0.15,
    `per token ${p.prefill_ms_per_token.value}`,
  )
})

test('prefill: no curvature is invented from short prompts of a linear server', () => {
  const p = fitOn(prefillPoints([16, 32, 64, 96, 128], (t) => 20 + 0.5 * t))
  assert.equal(p.prefill_ms_per_token_sq?.value, 0)
  assert.match(p.prefill_ms_per_token_sq?.basis ?? '', /includes 0/)
  assert.ok(Math.abs(p.prefill_ms_per_token.value / 0.5 - 1) < 0.1)
})

test('prefill at two lengths: no square term is tested (the field is absent)', () => {
  const p = fitOn(prefillPoints([64, 512], (t) => 20 + 0.5 * t))
  assert.equal(p.prefill_ms_per_token_sq, undefined)
})

/** The engine's records at batches 1..4 and two prompt lengths: the evidence a calibration gathers. */
function decodeEvidence(params: SimParams, prompts: readonly number[]): FitInput['decode'] {
  const evidence = new ModelEvidence(null)
  for (const inputTokens of prompts)
    for (const concurrency of [1, 2, 3, 4])
      for (const record of virtualRecords(params, {
        concurrency,
        requests: 6 * concurrency,
        inputTokens,
        outputTokens: 96,
      }))
        evidence.add({ ...record, level: concurrency + inputTokens * 100 })
  return evidence.seen().decode
}

test('decode: the step’s cost per token of context is recovered where two contexts were decoded', () => {
  const params = resolveSimParams({
    slots: 4,
    decode_base_ms: 8,
    decode_ms_per_seq: 1,
    decode_ms_per_context_token: 0.002,
    prefill_ms_per_token: 0.2,
  })
  const p = fitOn(
    prefillPoints([64, 256, 1024], (t) => 0.2 * t),
    decodeEvidence(params, [128, 2048]),
  )
  const perContext = p.decode_ms_per_context_token
  assert.ok(perContext !== undefined)
  assert.ok(Math.abs(perContext.value / 0.002 - 1) < 0.2, `per context token ${perContext.value}`)
  assert.ok(Math.abs(p.decode_ms_per_seq.value - 1) < 0.3, `per seq ${p.decode_ms_per_seq.value}`)
  assert.ok(Math.abs(p.decode_base_ms.value - 8) < 1.5, `base ${p.decode_base_ms.value}`)
})

test('decode: no context cost is invented where the step does not grow with it', () => {
  const params = resolveSimParams({
    slots: 4,
    decode_base_ms: 8,
    decode_ms_per_seq: 1,
    prefill_ms_per_token: 0.2,
  })
  const p = fitOn(
    prefillPoints([64, 256, 1024], (t) => 0.2 * t),
    decodeEvidence(params, [128, 2048]),
  )
  assert.equal(p.decode_ms_per_context_token?.value ?? 0, 0)
  assert.ok(Math.abs(p.decode_ms_per_seq.value - 1) < 0.1, `per seq ${p.decode_ms_per_seq.value}`)
})

test('predict says plainly when a prompt is outside the range the prefill was seen at', () => {
  const params = resolveSimParams({
    slots: 4,
    decode_base_ms: 8,
    decode_ms_per_seq: 1,
    prefill_ms_per_token: 0.2,
  })
  const model = modelOn(
    prefillPoints([64, 128, 256, 512], (t) => 5 + 0.2 * t),
    decodeEvidence(params, [128]),
  )
  assert.deepEqual(model.validity?.prompt_tokens, { min: 64, max: 512 })
  const warned = (input_tokens: number) =>
    predict(model, { input_tokens, output_tokens: 32, levels: [1, 2], slos: [], rate: null }).warnings.filter(
      (warning) => warning.startsWith('outside the calibrated range'),
    )
  assert.deepEqual(warned(128), [])
  const outside = warned(2048)
  assert.ok(
    outside.some((warning) => /prompts of 2048 tokens, where the prefill was seen at 64–512/.test(warning)),
    outside.join('\n'),
  )
  assert.ok(
    outside.some((warning) => /decode step is extrapolated/.test(warning)),
    outside.join('\n'),
  )
})

test('prefill: one late long probe bends no square term (curvature is tested on lengths seen twice)', () => {
  // As a run against a linear simulator records it on a busy machine: probes at 24 and 388 tokens
  // (the long one 33 ms late), a level of one stream at ~128 tokens.
  const lengths = [24, 388, 127, 130, 122, 132, 130, 124, 128, 128, 131, 134, 129, 129, 128]
  const late = [1.0, 33, 1.2, 0.4, 0.3, 1.2, 0.6, 1.1, 0.8, 0.7, 1.1, 0.4, 0.5, 1.2, 0.0]
  const points = lengths.map((tokens, i) => ({ tokens, ms: 20 + 0.2 * tokens + (late[i] as number) }))
  const p = fitOn(points)
  assert.equal(p.prefill_ms_per_token_sq, undefined, JSON.stringify(p.prefill_ms_per_token_sq))
})
