import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ranFull } from '../../src/analysis/saturation.js'
import { scalingStep } from '../../src/analysis/scaling-step.js'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { seededRandom } from '../../src/random.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { finishResult } from '../../src/result/build-result.js'

/**
 * The verdicts and the knee come from one decision model: over many generated gradients (servers
 * with a slot limit, noise of every width, failures, client trouble, interrupts, server gauges or
 * none), no text contradicts a figure it sits beside. A template level from a real run
 * (test/fixtures/rendered/conc) carries every field; each gradient overrides the judged ones.
 */

const TEMPLATE = JSON.parse(
  readFileSync(new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url), 'utf8'),
) as BenchResult
const BASE = TEMPLATE.levels[0] as LevelSummary
const LADDERS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
type Figures = Omit<LevelSummary, 'verdict' | 'advice'>

interface Gradient {
  levels: Figures[]
  interrupted: Set<number>
  slots: number | null
}

/** A server of `slots` slots under closed-loop load, its figures blurred by noise, failures and interrupts. */
function gradient(random: () => number): Gradient {
  const values = LADDERS.filter(() => random() < 0.5)
  while (values.length < 2) values.push(LADDERS[values.length * 3] as number)
  values.sort((a, b) => a - b)
  const unique = [...new Set(values)]
  const slots = 1 + Math.floor(random() * 16)
  const perStream = 20 + random() * 80
  const noise = random() * 0.3
  const intervals = random() < 0.8
  const gauges = random() < 0.6
  const interrupted = new Set<number>()
  if (random() < 0.2) interrupted.add(unique.at(-1) as number)
  const failFrom = random() < 0.25 ? (unique[Math.floor(random() * unique.length)] as number) : null
  const levels = unique.map((value) => {
    const running = Math.min(value, slots)
    const wait = Math.max(0, value - slots)
    const jitter = 1 + (random() * 2 - 1) * noise
    const tokens = perStream * running * jitter
    const serviceMs = 1000 * (1 + random() * noise)
    const ttft = 50 * (1 + random() * noise) + (wait / Math.max(1, slots)) * serviceMs
    const e2e = serviceMs + ttft
    const requests = 8 + Math.floor(random() * 60)
    const failed = failFrom !== null && value >= failFrom ? Math.floor(random() * requests * 0.3) : 0
    const timeouts = failed > 0 && random() < 0.5 ? 1 : 0
    const spread = noise * (0.2 + random())
    const around = (x: number) => ({ low: x * (1 - spread), high: random() < 0.3 ? null : x * (1 + spread) })
    const level: Figures = {
      ...BASE,
      value,
      requests,
      ok: requests - failed,
      failed,
      success_rate: (requests - failed) / requests,
      errors: { ...BASE.errors, timeout: timeouts },
      non_load_failures: null,
      misconfiguration: null,
      ttft_ms: { ...BASE.ttft_ms, mean: ttft, p50: ttft, p95: ttft * (1.2 + random()) },
      e2e_ms: { ...BASE.e2e_ms, mean: e2e, p50: e2e, p95: e2e * 1.3 },
      output_tokens_per_s: tokens,
      output_tokens_per_s_steady: tokens,
      steady_window: null,
      achieved_concurrency: { mean: value * (0.9 + random() * 0.1), max: value, streams: value },
      intervals: intervals
        ? {
            confidence: 0.95,
            output_tokens_per_s: { low: tokens * (1 - spread), high: tokens * (1 + spread), slices: 12 },
            output_tokens_per_s_steady: null,
            ttft_ms: { p50: around(ttft), p95: around(ttft * 1.5) },
            tpot_ms: {},
            e2e_ms: { p50: around(e2e) },
          }
        : undefined,
      client: { ...BASE.client, bound: random() < 0.05 },
      server: gauges
        ? {
            ...(BASE.server as NonNullable<LevelSummary['server']>),
            running: { mean: running * (0.9 + random() * 0.1), max: running },
            waiting: { mean: wait * random(), max: wait },
          }
        : undefined,
    }
    return level
  })
  return { levels, interrupted, slots: random() < 0.5 ? slots : null }
}

function judge({ levels, interrupted, slots }: Gradient): BenchResult {
  const meta = {
    ...TEMPLATE.meta,
    server: { ...(TEMPLATE.meta.server as NonNullable<BenchResult['meta']['server']>), slots },
    levels_run: levels.map((level) => ({
      value: level.value,
      workers: 1,
      client: TEMPLATE.meta.levels_run[0]?.client as BenchResult['meta']['levels_run'][number]['client'],
      ...(interrupted.has(level.value) ? { interrupted: true } : {}),
    })),
  }
  return finishResult(levels, meta)
}

const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`

test('over 2,000 generated gradients, no verdict or summary contradicts the figures beside it', () => {
  const random = seededRandom(2512)
  let knees = 0
  let serverFullRuns = 0
  for (let run = 0; run < 2000; run++) {
    const input = gradient(random)
    const result = judge(input)
    const where = `gradient ${run}: ${JSON.stringify(result.levels.map((l) => [l.value, l.verdict]))} — ${result.saturation_summary}`
    const knee = result.saturation
    const judged = result.levels.filter((level) => level.verdict !== 'interrupted')
    if (knee !== null) knees++
    // Interrupted levels are shown, not judged, and never the knee or its bracket.
    for (const level of result.levels)
      assert.equal(level.verdict === 'interrupted', input.interrupted.has(level.value), where)
    if (knee !== null) {
      assert.ok(!input.interrupted.has(knee.value), where)
      const [low, high] = knee.bracket ?? [knee.value, knee.value]
      assert.ok(low <= knee.value && knee.value <= high, `knee outside its bracket: ${where}`)
      for (const end of [low, high])
        assert.ok(
          judged.some((level) => level.value === end),
          where,
        )
      assert.equal(/\(uncertain: /.test(result.saturation_summary), knee.confidence === 'uncertain', where)
    }
    // No "not saturated" (or "keep adding") beside a saturated or overloaded level.
    if (/not saturated/.test(result.saturation_summary))
      assert.ok(!judged.some((l) => l.verdict === 'saturated' || l.verdict === 'overloaded'), where)
    // Every word is a figure or a level: nothing unbounded or undefined reaches the text.
    for (const text of [result.saturation_summary, ...result.levels.map((l) => l.advice)])
      assert.doesNotMatch(text, /Infinity|NaN|undefined|null/, where)
    // No "keep adding" below an overloaded level.
    const overloadedAt = Math.min(...judged.filter((l) => l.verdict === 'overloaded').map((l) => l.value))
    for (const level of judged)
      if (Number.isFinite(overloadedAt) && level.value < overloadedAt)
        assert.doesNotMatch(level.advice, /keep adding/, where)
    // Saturated only past a knee.
    for (const level of judged)
      if (level.verdict === 'saturated') assert.ok(knee !== null && level.value > knee.value, where)
    // Never "keep adding" while the server's own gauges show it full below a lasting failure.
    const capacity = input.slots ?? Math.max(...judged.map((l) => l.server?.running?.max ?? 0))
    const full = judged.some((level) => ranFull(level, capacity, input.slots !== null))
    if (full) {
      serverFullRuns++
      assert.ok(knee !== null, `server full, no knee: ${where}`)
      for (const level of result.levels) assert.doesNotMatch(level.advice, /keep adding/, where)
    }
    // Healthy past the knee only on a step that gained beyond noise into a server running every stream.
    const sorted = [...judged].sort((a, b) => a.value - b.value)
    sorted.forEach((level, i) => {
      if (knee === null || level.verdict !== 'healthy' || level.value <= knee.value) return
      const step = scalingStep(sorted[i - 1] as LevelSummary, level, 'p95')
      assert.equal(step?.throughput, 'gains', where)
      assert.ok(!ranFull(level, capacity, input.slots !== null), where)
    })
    // The words after a step's figures agree with them (issue 36: "throughput +48% from 6 … more
    // streams add little throughput", "throughput −23% from 1 … still grows").
    sorted.forEach((level, i) => {
      if (i === 0) return
      const step = scalingStep(sorted[i - 1] as LevelSummary, level, 'p95')
      if (step === null) return
      if (/add little throughput/.test(level.advice))
        assert.notEqual(step.throughput, 'gains', `"little throughput" beside a gain: ${where}`)
      if (/still grows/.test(level.advice))
        assert.equal(step.throughput, 'gains', `"still grows" beside no gain: ${where}`)
      if (/still rose/.test(level.advice)) assert.ok(step.gain > 0, `"still rose" beside a fall: ${where}`)
    })
    // Overloaded advice quotes the level's own success rate and claims no trend.
    for (const level of judged) {
      if (level.verdict !== 'overloaded') continue
      assert.match(
        level.advice,
        new RegExp(`success rate ${percent(level.success_rate).replace('.', '\\.')}`),
        where,
      )
      assert.doesNotMatch(level.advice, /falls/, where)
    }
    // "success rate fell from A to B" only when it fell.
    const fell = /success rate fell from ([\d.]+)% to ([\d.]+)%/.exec(result.saturation_summary)
    if (fell) assert.ok(Number(fell[2]) < Number(fell[1]), where)
  }
  // The generator reaches every case it means to check.
  assert.ok(knees > 500 && serverFullRuns > 300, `knees ${knees}, server-full runs ${serverFullRuns}`)
})
