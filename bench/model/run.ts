/**
 * The capacity model's accuracy on a server of known parameters (issue 39 item 4), in virtual time:
 * deterministic and quick. For each truth (a GPU-like and a CPU-like engine, both with attention cost
 * in prefill and a decode step that grows with the context held):
 *   1. a designed calibration is "measured" against the truth's engine (bench/model/virtual-run.ts):
 *      prefill at c=1 over prompt lengths from 64 to half the context, decode at batch sizes 1..slots
 *      at two prompt lengths;
 *   2. the model is fitted on those records (src/model/fit.ts) and its parameters printed beside the truth;
 *   3. held-out workloads (long prompt/short output, short/long, mixed lengths) are predicted
 *      (src/model/predict.ts) and measured against the truth's engine, per level: output tok/s, TTFT p50,
 *      TPOT p50, and the knee by the run's rule; with the mean and worst error, and how many measured
 *      points fell inside the predicted interval.
 * Not here yet: an open-loop rate (predict models a closed loop only). --kit: on the real engine kit
 * (bench/model/kit.ts). Run: npm run bench:model
 */
import { findSaturation } from '../../src/analysis/saturation.js'
import type { ScalingFigures } from '../../src/analysis/scaling-step.js'
import { summarizeSamples } from '../../src/metrics/distribution.js'
import type { CapacityParameters } from '../../src/model/capacity-model.js'
import type { SimParams } from '../../src/model/engine.js'
import { ModelEvidence } from '../../src/model/evidence.js'
import { fitCapacity } from '../../src/model/fit.js'
import { type Predicted, predict } from '../../src/model/predict.js'
import type { RequestRecord } from '../../src/records/types.js'
import { TRUTHS, type Truth } from './truths.js'
import { type VirtualLevel, virtualRecords } from './virtual-run.js'

/** The calibration's design: what identifies each parameter. */
function calibrationLoads(truth: Truth): VirtualLevel[] {
  const half = truth.contextPerSlot / 2
  const lengths = [64, 128, 256, 512, 1024, 2048, 4096].filter((length) => length <= half)
  const prefill = lengths.map(
    (inputTokens): VirtualLevel => ({
      concurrency: 1,
      requests: 3,
      inputTokens,
      outputTokens: 2,
      phase: 'calibration',
    }),
  )
  const batches = Array.from({ length: truth.params.slots }, (_, i) => i + 1)
  const decode = [128, Math.round(half / 2)].flatMap((inputTokens) =>
    batches.map(
      (concurrency): VirtualLevel => ({
        concurrency,
        requests: 3 * concurrency,
        inputTokens,
        outputTokens: 64,
      }),
    ),
  )
  return [...prefill, ...decode]
}

function calibrate(truth: Truth) {
  const evidence = new ModelEvidence(null)
  let key = 0
  for (const load of calibrationLoads(truth)) {
    key++
    // Each calibration level its own timeline: decode evidence is read per level.
    for (const record of virtualRecords(truth.params, load)) evidence.add({ ...record, level: key })
  }
  const seen = evidence.seen()
  return fitCapacity({
    prefill: seen.prefill,
    decode: seen.decode,
    levels: [],
    mode: 'request_rate',
    server: { engine: truth.engine, slots: truth.params.slots, context_per_slot: truth.contextPerSlot },
    knee: null,
    workload: { input_tokens: 128, output_tokens: 64 },
  })
}

interface Workload {
  name: string
  input: (i: number) => number
  output: (i: number) => number
}

/** A deterministic spread of lengths (golden-ratio sequence): mixed, as a dataset's are. */
const spread = (low: number, high: number) => (i: number) =>
  Math.round(low + (high - low) * ((i * 0.6180339887) % 1))

const WORKLOADS: Workload[] = [
  { name: 'long prompt / short output (1536 / 24)', input: () => 1536, output: () => 24 },
  { name: 'short prompt / long output (32 / 256)', input: () => 32, output: () => 256 },
  { name: 'mixed lengths (64–1024 / 32–256)', input: spread(64, 1024), output: spread(32, 256) },
]

interface MeasuredLevel {
  level: number
  tokensPerS: number
  ttftP50: number
  tpotP50: number
  ttft: ReturnType<typeof summarizeSamples>
}

/** What a client of the truth measures at one level: throughput over the middle 80% of completions. */
function measure(truth: Truth, workload: Workload, level: number): MeasuredLevel {
  const records = virtualRecords(truth.params, {
    concurrency: level,
    requests: Math.max(48, 8 * level),
    inputTokens: workload.input,
    outputTokens: workload.output,
  })
  const ends = records.map((r) => r.end_at).sort((a, b) => a - b)
  const from = ends[Math.floor(ends.length * 0.1)] as number
  const to = ends[Math.floor(ends.length * 0.9)] as number
  const tokens = records.flatMap((r) => r.token_times).filter((t) => t > from && t <= to).length
  const ttft = summarizeSamples(records.map(ttftOf), [50, 95])
  const tpot = summarizeSamples(
    records.map(
      (r) =>
        ((r.token_times.at(-1) as number) - (r.token_times[0] as number)) /
        Math.max(1, r.token_times.length - 1),
    ),
    [50],
  )
  return {
    level,
    tokensPerS: (tokens * 1000) / (to - from),
    ttftP50: ttft.p50 ?? 0,
    tpotP50: tpot.p50 ?? 0,
    ttft,
  }
}

const ttftOf = (r: RequestRecord) => (r.token_times[0] as number) - r.sent_at

/** The knee by the run's rule on measured levels, with the engine's exact gauges (as predict.ts does). */
function measuredKnee(levels: readonly MeasuredLevel[], slots: number): number | null {
  const figures = levels.map(
    (m) =>
      ({
        value: m.level,
        output_tokens_per_s: m.tokensPerS,
        ttft_ms: m.ttft,
        success_rate: 1,
        achieved_concurrency: { mean: m.level, max: m.level },
        server: {
          running: { mean: Math.min(m.level, slots), max: Math.min(m.level, slots) },
          waiting: { mean: Math.max(0, m.level - slots), max: Math.max(0, m.level - slots) },
        },
      }) as ScalingFigures,
  )
  return findSaturation(figures, 'p95', false, slots)?.value ?? null
}

const PARAMETER_KEYS = [
  'prefill_base_ms',
  'prefill_ms_per_token',
  'prefill_ms_per_token_sq',
  'decode_base_ms',
  'decode_ms_per_seq',
  'decode_ms_per_context_token',
] as const

function parameterTable(truth: SimParams, fitted: CapacityParameters): string[] {
  return PARAMETER_KEYS.map((key) => {
    const p = fitted[key]
    const value = p?.value ?? Number.NaN
    const interval = p?.low != null && p.high != null ? ` (${sig(p.low)}–${sig(p.high)})` : ''
    return `  ${key.padEnd(28)} truth ${sig(truth[key]).padStart(8)}  fitted ${sig(value)}${interval}  ${pct(value / truth[key] - 1)}`
  })
}

const sig = (x: number) => (Number.isFinite(x) ? String(Number(x.toPrecision(3))) : String(x))
const pct = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%` : '–')

interface Errors {
  throughput: number[]
  ttft: number[]
  tpot: number[]
  inside: number
  points: number
  knees: number
  kneesEqual: number
}

function runTruth(truth: Truth, all: Errors): void {
  const model = calibrate(truth)
  console.log(
    `\n## ${truth.name}: slots ${truth.params.slots}, ${truth.contextPerSlot} tokens of context per slot`,
  )
  console.log(
    'Recovered parameters (calibration: prefill at c=1 over 64 … half the context, decode at 1..slots at two prompt lengths):',
  )
  for (const line of parameterTable(truth.params, model.parameters)) console.log(line)
  const slots = truth.params.slots
  const levels = [1, 2, slots, 2 * slots]
  for (const workload of WORKLOADS) {
    const n = 64
    const meanOf = (f: (i: number) => number) =>
      Math.round(Array.from({ length: n }, (_, i) => f(i)).reduce((a, b) => a + b, 0) / n)
    const prediction = predict(model, {
      input_tokens: meanOf(workload.input),
      output_tokens: meanOf(workload.output),
      levels,
      slos: [],
      rate: null,
    })
    const measured = levels.map((level) => measure(truth, workload, level))
    const knee = measuredKnee(measured, slots)
    all.knees++
    if (knee === prediction.knee.value) all.kneesEqual++
    console.log(
      `\n${workload.name}: knee predicted ${prediction.knee.value ?? 'none'} / measured ${knee ?? 'none'}`,
    )
    console.log(
      '  level | tok/s predicted / measured (err) | TTFT p50 ms (err) | TPOT p50 ms (err) | tok/s inside 95% interval',
    )
    prediction.levels.forEach((p, i) => {
      const m = measured[i] as MeasuredLevel
      const err = (pred: Predicted | undefined, meas: number) =>
        pred === undefined ? Number.NaN : pred.value / meas - 1
      const e = {
        throughput: err(p.output_tokens_per_s, m.tokensPerS),
        ttft: err(p.ttft_ms.p50, m.ttftP50),
        tpot: err(p.tpot_ms.p50, m.tpotP50),
      }
      all.throughput.push(e.throughput)
      all.ttft.push(e.ttft)
      all.tpot.push(e.tpot)
      const inside = p.output_tokens_per_s.low <= m.tokensPerS && m.tokensPerS <= p.output_tokens_per_s.high
      all.points++
      if (inside) all.inside++
      console.log(
        `  ${String(p.level).padStart(5)} | ${sig(p.output_tokens_per_s.value)} / ${sig(m.tokensPerS)} (${pct(e.throughput)}) | ` +
          `${sig(p.ttft_ms.p50?.value ?? Number.NaN)} / ${sig(m.ttftP50)} (${pct(e.ttft)}) | ` +
          `${sig(p.tpot_ms.p50?.value ?? Number.NaN)} / ${sig(m.tpotP50)} (${pct(e.tpot)}) | ${inside ? 'yes' : 'no'}`,
      )
    })
  }
}

function summary(name: string, errors: readonly number[]): string {
  const abs = errors.filter(Number.isFinite).map(Math.abs)
  const mean = abs.reduce((a, b) => a + b, 0) / Math.max(1, abs.length)
  return `${name}: mean |error| ${(mean * 100).toFixed(1)}%, worst ${(Math.max(...abs) * 100).toFixed(1)}%`
}

function main(): void {
  const started = performance.now()
  const all: Errors = { throughput: [], ttft: [], tpot: [], inside: 0, points: 0, knees: 0, kneesEqual: 0 }
  console.log('# bench:model — the capacity model against a simulator of known parameters (virtual time)')
  for (const truth of TRUTHS) runTruth(truth, all)
  console.log('\n## All held-out levels')
  console.log(summary('output tok/s', all.throughput))
  console.log(summary('TTFT p50', all.ttft))
  console.log(summary('TPOT p50', all.tpot))
  console.log(`knee equal: ${all.kneesEqual} of ${all.knees} workloads`)
  console.log(`measured tok/s inside the predicted interval: ${all.inside} of ${all.points}`)
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`)
}

// --kit: the same judgement on the real engine kit, in wall-clock time (bench/model/kit.ts).
if (process.argv.includes('--kit')) await import('./kit.js')
else main()
