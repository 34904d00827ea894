import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CPU_LIKE_TRUTH } from '../../bench/model/truths.js'
import { virtualRecords } from '../../bench/model/virtual-run.js'
import {
  type CalibrationPoint,
  type CalibrationSpeed,
  decodeBatches,
  designCalibration,
  estimatePointS,
  prefillLengths,
  slotProbe,
} from '../../src/model/calibration-design.js'
import { type CalibrationRun, conformalQuantile, fitCalibration } from '../../src/model/calibration-fit.js'
import { mostOverlapping } from '../../src/model/calibration-measure.js'
import { decodeStepMs, resolveSimParams, type SimParams } from '../../src/model/engine.js'
import { fitCapacity } from '../../src/model/fit.js'
import { MODEL_FILE_FORMAT, readModelFile } from '../../src/model/model-file.js'
import { predict } from '../../src/model/predict.js'

/** A CPU-like server as llama.cpp on the kit: prefills stall decoding, attention cost in both phases. */
const TRUTH: SimParams = CPU_LIKE_TRUTH.params

/** The speed a first look gives: exact here, so the estimates are checkable. */
function speedOf(params: SimParams, slots: number): CalibrationSpeed {
  return {
    prefillBaseMs: params.prefill_base_ms,
    prefillMsPerToken: params.prefill_ms_per_token + params.prefill_ms_per_token_sq * 768,
    fullStepMs: decodeStepMs(params, slots, slots * 1024),
  }
}

/** The design with no budget to fit, on a slot's context of 1024 tokens. */
function unboundedDesign(params: SimParams) {
  return designCalibration({
    budgetS: 1e6,
    spentS: 0,
    contextPerSlot: 1024,
    slots: params.slots,
    speed: speedOf(params, params.slots),
  })
}

/** The calibration "sent" to the truth's engine in virtual time: each point's records. */
function runOn(params: SimParams, points: readonly Omit<CalibrationPoint, 'estimatedS'>[]): CalibrationRun[] {
  return points.map((point) => ({
    point: { estimatedS: 0, ...point },
    records: virtualRecords(params, {
      concurrency: point.concurrency,
      requests: point.requests,
      inputTokens: point.inputTokens,
      outputTokens: point.outputTokens,
    }),
  }))
}

test('the design spreads prompts from short to at least half the context, each length seen twice or more', () => {
  for (const context of [1024, 4096, 32768]) {
    const lengths = prefillLengths(context)
    assert.ok(lengths.length >= 5, `${context}: ${lengths}`)
    assert.ok((lengths[0] as number) <= 32, `${context}: shortest ${lengths[0]}`)
    assert.ok((lengths.at(-1) as number) >= context / 2, `${context}: longest ${lengths.at(-1)}`)
    assert.ok((lengths.at(-1) as number) < context, `${context}: longest fits a slot`)
  }
  const design = unboundedDesign(TRUTH)
  const prefill = design.points.filter((p) => p.purpose === 'prefill')
  const seen = new Map<number, number>()
  for (const p of prefill) seen.set(p.inputTokens, (seen.get(p.inputTokens) ?? 0) + 1)
  assert.ok(
    [...seen.values()].every((n) => n >= 2),
    JSON.stringify([...seen]),
  )
  assert.ok(prefill.every((p) => p.concurrency === 1))
  const decode = design.points.filter((p) => p.purpose === 'decode')
  const prompts = [...new Set(decode.map((p) => p.inputTokens))]
  assert.equal(prompts.length, 2, 'decode at two context lengths')
  for (const prompt of prompts)
    assert.deepEqual(
      decode.filter((p) => p.inputTokens === prompt).map((p) => p.concurrency),
      [1, 2, 3, 4],
      'every batch size 1..slots',
    )
  assert.ok(
    decode.every((p) => p.inputTokens + p.outputTokens <= 1024),
    'each request fits a slot',
  )
})

test('many slots are decoded at six batch sizes from 1 to the slots', () => {
  assert.deepEqual(decodeBatches(3), [1, 2, 3])
  const wide = decodeBatches(64)
  assert.equal(wide.length, 6)
  assert.equal(wide[0], 1)
  assert.equal(wide.at(-1), 64)
})

test('the design fits the budget left, leaner as it shrinks, and says when even the leanest does not', () => {
  const input = { spentS: 5, contextPerSlot: 1024, slots: 4, speed: speedOf(TRUTH, 4) }
  const rich = designCalibration({ ...input, budgetS: 1e6 })
  assert.equal(rich.overBudget, false)
  const budgetS = 5 + rich.estimatedS * 0.6
  const lean = designCalibration({ ...input, budgetS })
  assert.ok(lean.estimatedS <= budgetS - 5, `${lean.estimatedS} s within ${budgetS - 5}`)
  assert.ok(lean.estimatedS < rich.estimatedS)
  assert.notEqual(lean.richness, rich.richness)
  const none = designCalibration({ ...input, budgetS: 6 })
  assert.equal(none.overBudget, true)
  assert.ok(none.points.length > 0, 'the leanest design is still planned, and cut as the budget runs out')
  for (const point of rich.points) assert.equal(point.estimatedS, estimatePointS(point, input.speed))
})

test("a point's estimate is on the slow side of what the engine takes", () => {
  const design = unboundedDesign(TRUTH)
  for (const [run] of design.points.map((point) => runOn(TRUTH, [point]))) {
    const { point, records } = run as CalibrationRun
    const took =
      (Math.max(...records.map((r) => r.end_at)) - Math.min(...records.map((r) => r.sent_at))) / 1000
    assert.ok(took <= point.estimatedS * 1.05, `${JSON.stringify(point)} took ${took} s`)
  }
})

test('the slot probe sees the slots: never more requests decoding at once than the engine has', () => {
  for (const slots of [2, 4, 6]) {
    const params = resolveSimParams({ ...TRUTH, slots })
    const [run] = runOn(params, [slotProbe(null)])
    assert.equal(mostOverlapping((run as CalibrationRun).records), slots)
    const [declared] = runOn(params, [slotProbe(slots)])
    assert.ok((declared as CalibrationRun).point.concurrency > slots)
    assert.equal(mostOverlapping((declared as CalibrationRun).records), slots)
  }
})

function calibrateOn(params: SimParams, declaredSlots: number | null) {
  const probe = runOn(params, [slotProbe(declaredSlots)])
  const design = unboundedDesign(params)
  return fitCalibration([...probe, ...runOn(params, design.points)], {
    engine: 'llama.cpp',
    slots: declaredSlots,
    contextPerSlot: 1024,
    contextSource: 'server',
  })
}

test('fitted on a calibration of a server of known parameters, the model recovers them, each with its source', () => {
  const model = calibrateOn(TRUTH, null)
  const p = model.parameters
  assert.equal(p.slots.value, 4)
  assert.equal(p.slots.source, 'measured', p.slots.basis)
  const near = (name: keyof SimParams, fitted: number | undefined, tolerance: number) => {
    const truth = TRUTH[name]
    assert.ok(
      fitted !== undefined && Math.abs(fitted / truth - 1) <= tolerance,
      `${name}: truth ${truth}, fitted ${fitted}`,
    )
  }
  near('prefill_ms_per_token', p.prefill_ms_per_token.value, 0.05)
  near('prefill_ms_per_token_sq', p.prefill_ms_per_token_sq?.value, 0.05)
  near('decode_ms_per_seq', p.decode_ms_per_seq.value, 0.1)
  near('decode_ms_per_context_token', p.decode_ms_per_context_token?.value, 0.25)
  assert.equal(p.prefill_blocks_decode.value, 1)
  assert.equal(p.prefill_blocks_decode.source, 'measured')
  assert.equal(p.kv_cache_tokens?.source, 'server')
  for (const [name, parameter] of Object.entries(p))
    if (parameter !== null) assert.ok(parameter.source !== undefined, `${name} has a source`)
  assert.ok((model.validity?.prompt_tokens?.max ?? 0) >= 512, JSON.stringify(model.validity))
  const interval = model.interval
  assert.ok(interval !== undefined)
  assert.equal(interval.coverage, 0.9)
  // No noise in virtual time: the model reproduces its own calibration closely, and says so.
  assert.ok(interval.relative_error.output_tokens_per_s < 0.1, JSON.stringify(interval))
})

test("the server's declared slots are its word, and the probe's count is quoted beside it", () => {
  const model = calibrateOn(TRUTH, 4)
  assert.equal(model.parameters.slots.source, 'server')
  assert.match(model.parameters.slots.basis, /saw at most 4 decoding at once/)
})

test('a calibrated prediction carries its 90% interval, and says plainly when asked past the calibrated range', () => {
  const model = calibrateOn(TRUTH, 4)
  const inside = predict(model, {
    input_tokens: 256,
    output_tokens: 32,
    levels: [1, 4],
    slos: [],
    rate: null,
  })
  assert.match(inside.interval, /90%/)
  assert.ok(!inside.warnings.some((w) => /outside the calibrated range/.test(w)), inside.warnings.join('\n'))
  const e = model.interval?.relative_error.output_tokens_per_s ?? 0
  const level = inside.levels[0]?.output_tokens_per_s
  assert.ok(
    level !== undefined &&
      level.low <= level.value * (1 - e) + 0.01 &&
      level.high >= level.value * (1 + e) - 0.01,
  )
  const far = predict(model, { input_tokens: 4000, output_tokens: 32, levels: [1], slos: [], rate: null })
  assert.ok(
    far.warnings.some((w) => /outside the calibrated range/.test(w)),
    far.warnings.join('\n'),
  )
})

test('held out of the calibration, a workload of known truth is predicted close', () => {
  const model = calibrateOn(TRUTH, 4)
  const truth = (level: number) =>
    runOn(TRUTH, [
      { purpose: 'decode', concurrency: level, requests: 8 * level, inputTokens: 384, outputTokens: 24 },
    ])
  const prediction = predict(model, {
    input_tokens: 384,
    output_tokens: 24,
    levels: [1, 2, 4],
    slos: [],
    rate: null,
  })
  for (const p of prediction.levels) {
    const records = (truth(p.level)[0] as CalibrationRun).records
    const ttfts = records.map((r) => (r.token_times[0] as number) - r.sent_at).sort((a, b) => a - b)
    const ttft = ttfts[Math.floor(ttfts.length / 2)] as number
    const predicted = p.ttft_ms.p50?.value ?? 0
    assert.ok(Math.abs(predicted / ttft - 1) < 0.25, `level ${p.level}: TTFT ${predicted} against ${ttft}`)
  }
})

test('the conformal quantile is the ⌈(n+1)·0.9⌉-th smallest |error|, the largest for few points', () => {
  assert.equal(conformalQuantile([], 0.9), 0)
  assert.equal(conformalQuantile([0.1, -0.3, 0.2], 0.9), 0.3)
  const twenty = Array.from({ length: 20 }, (_, i) => (i + 1) / 100)
  assert.equal(conformalQuantile(twenty, 0.9), 0.19)
})

test('a model file is read back as the model it holds, and a bad one is refused naming the key', () => {
  const model = calibrateOn(TRUTH, 4)
  const file = {
    format: MODEL_FILE_FORMAT,
    calibrated_at: '2026-12-06T00:00:00.000Z',
    server: {
      base_url: 'http://127.0.0.1:1',
      model: 'm',
      engine: 'llama.cpp',
      context_per_slot: 1024,
      context_source: 'server',
    },
    calibration: { budget_s: 150, spent_s: 1, design: '', points: [] },
    model,
  }
  const read = readModelFile(JSON.parse(JSON.stringify(file)))
  assert.ok('model' in read, JSON.stringify(read))
  assert.deepEqual(read.model.parameters, model.parameters)
  assert.deepEqual(read.model.interval, model.interval)
  const refused = (json: unknown) => {
    const outcome = readModelFile(json)
    assert.ok('problems' in outcome, 'refused')
    return outcome.problems.join('\n')
  }
  assert.match(refused([]), /expected a JSON object/)
  assert.match(refused({ ...file, format: 'llmbench.result/2' }), /^format: expected "llmbench.model\/1"/)
  const negative = structuredClone(file)
  negative.model.parameters.decode_ms_per_seq.value = -1
  assert.match(refused(negative), /model\.parameters\.decode_ms_per_seq: value -1/)
  const wide = structuredClone(file)
  ;(wide.model.interval as { relative_error: { ttft_ms: unknown } }).relative_error.ttft_ms = 'wide'
  assert.match(refused(wide), /model\.interval\.relative_error\.ttft_ms: expected a number/)
})

test("fitted on the relative error, a calibration's short prompts keep their own prefill time", () => {
  // ±15% per request, as a busy machine's timings: in ms the long prompts' noise dwarfs a short one's time.
  const noise = (i: number) => 1 + 0.15 * Math.sin(i * 1.3)
  const ms = (tokens: number) => 10 + 0.5 * tokens + 3e-4 * tokens * tokens
  const points = prefillLengths(1024).flatMap((tokens, j) =>
    [0, 1, 2].map((r) => ({ tokens, ms: ms(tokens) * noise(3 * j + r) })),
  )
  const at = (relative: boolean, tokens: number) => {
    const p = fitCapacity({
      prefill: { points, source: 'timings', relative },
      decode: { overlap: [], stall: [] },
      levels: [],
      mode: 'request_rate',
      server: { engine: 'llama.cpp', slots: 4, context_per_slot: 1024 },
      knee: null,
      workload: { input_tokens: 16, output_tokens: 2 },
    }).parameters
    return (
      p.prefill_base_ms.value +
      p.prefill_ms_per_token.value * tokens +
      (p.prefill_ms_per_token_sq?.value ?? 0) * tokens ** 2
    )
  }
  const miss = (relative: boolean, tokens: number) => Math.abs(at(relative, tokens) / ms(tokens) - 1)
  assert.ok(miss(true, 16) < 0.1, `relative fit at 16 tokens: ${at(true, 16)} against ${ms(16)}`)
  assert.ok(miss(false, 16) > miss(true, 16), `in ms: ${at(false, 16)}`)
  assert.ok(miss(true, 766) < 0.1, `relative fit at 766 tokens: ${at(true, 766)} against ${ms(766)}`)
})
