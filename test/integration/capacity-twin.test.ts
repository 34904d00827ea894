// test-lane: alone
// (the fit is held to the simulator's configured timings within 5%; beside three other test files the
// simulator's timers ran 2-4 ms late on every prefill, which the fit then rightly measured: 22.4 ms of
// a configured 20 in a CI run. Its subject is time on this CPU, so it runs with nothing beside it.)
// wall-clock: the fit is held to the simulator's timings within 5%
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { SimParams } from '../../src/model/engine.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { capacityGradient } from '../helpers/capacity-gradient.js'
import { tempDir } from '../helpers/run-config.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

/**
 * Issue 28's done criteria: the capacity model fitted on a run against the simulator recovers the
 * simulator's own parameters within 5%, and the simulator serving that model (`sim --from`) measures
 * the same gradient within 15% per level. Each simulator runs with llama.cpp's timings (prefill from
 * the server's own prompt_ms), a decode step growing 2 ms per sequence (well above timer noise) and
 * 4 slots, below the highest level, so the running gauge shows requests waiting. The simulator's
 * timers fire late (whole ms, a busy loop), so its every prefill really lasts 0.3-1.5 ms longer than
 * it was told: a fixed prefill cost of 20 ms or more keeps that under 5% (at 10 ms it was 8%).
 */
const GPU_LIKE: Partial<SimParams> = {
  slots: 4,
  prefill_base_ms: 20,
  prefill_ms_per_token: 0.2,
  decode_base_ms: 10,
  decode_ms_per_seq: 2,
  prefill_blocks_decode: 0,
}

/** As llama.cpp on a CPU: a prefill stalls every decoding stream, and costs more per token. */
const CPU_LIKE: Partial<SimParams> = {
  ...GPU_LIKE,
  prefill_base_ms: 40,
  prefill_ms_per_token: 0.5,
  prefill_blocks_decode: 1,
}

const FITTED = [
  'slots',
  'prefill_base_ms',
  'prefill_ms_per_token',
  'decode_base_ms',
  'decode_ms_per_seq',
] as const

function gradient(url: string, out: string): Promise<BenchResult> {
  return capacityGradient(url, out, { input_tokens: 128, output_tokens: 32 })
}

/** The gradient against a simulator of `params` in its own process (or `args`: sim --from), closed after. */
async function runAgainst(
  params: Partial<SimParams>,
  args: string[] = [],
): Promise<{ out: string; result: BenchResult }> {
  const sim = await startSimulatorProcess(params, { args: ['--timings', ...args] })
  try {
    const out = tempDir('llmbench-twin-')
    return { out, result: await gradient(sim.url, out) }
  } finally {
    await sim.close()
  }
}

function model(result: BenchResult): NonNullable<BenchResult['model']> {
  assert.ok(result.model !== undefined, 'the result carries a capacity model')
  return result.model
}

function assertRecovered(result: BenchResult, truth: Partial<SimParams>, say: (line: string) => void): void {
  const { parameters } = model(result)
  const seen = JSON.stringify(parameters)
  say(
    [...FITTED, 'prefill_blocks_decode' as const]
      .map((key) => `${key} ${Number(parameters[key].value.toPrecision(4))} (truth ${truth[key]})`)
      .join(', '),
  )
  for (const key of FITTED) {
    const fitted = parameters[key]
    const expected = truth[key] as number
    assert.ok(fitted.measured, `${key} measured: ${seen}`)
    const error = Math.abs(fitted.value / expected - 1)
    assert.ok(
      error <= 0.05,
      `${key}: fitted ${fitted.value}, truth ${expected} (${(error * 100).toFixed(1)}% off): ${seen}`,
    )
  }
  assert.equal(parameters.prefill_blocks_decode.value, truth.prefill_blocks_decode, seen)
}

/** The GPU-like run, shared by the fit's test and the twin's. */
let gpuRun: Promise<{ out: string; result: BenchResult }> | undefined
const gpuLike = () => {
  gpuRun ??= runAgainst(GPU_LIKE)
  return gpuRun
}

test('the fit recovers a GPU-like simulator’s parameters within 5%, prefills overlapping decoding', {
  timeout: 90_000,
}, async (t) => {
  assertRecovered((await gpuLike()).result, GPU_LIKE, (line) => t.diagnostic(line))
})

test('the fit recovers a CPU-like simulator’s parameters within 5%, prefills stalling decoding', {
  timeout: 90_000,
}, async (t) => {
  assertRecovered((await runAgainst(CPU_LIKE)).result, CPU_LIKE, (line) => t.diagnostic(line))
})

test('sim --from serves a twin that measures the same gradient within 15% per level', {
  timeout: 90_000,
}, async (t) => {
  const measured = await gpuLike()
  const twin = await runAgainst({}, ['--from', measured.out])
  const rate = (level: BenchResult['levels'][number]) =>
    level.steady_window != null ? level.output_tokens_per_s_steady : level.output_tokens_per_s
  const pairs = measured.result.levels.map((level) => {
    const other = twin.result.levels.find((l) => l.value === level.value)
    assert.ok(other !== undefined, `the twin ran level ${level.value}`)
    return { level: level.value, measured: rate(level), twin: rate(other) }
  })
  t.diagnostic(pairs.map((p) => `c=${p.level} ${p.measured} -> ${p.twin} tok/s`).join(', '))
  for (const pair of pairs) assert.ok(Math.abs(pair.twin / pair.measured - 1) <= 0.15, JSON.stringify(pairs))
  assert.equal(twin.result.meta.target.model, SIM_MODEL)
})
