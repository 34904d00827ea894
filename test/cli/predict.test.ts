// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: --confirm holds a measured run within 20% of the prediction
import assert from 'node:assert/strict'
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { CapacityModel } from '../../src/model/capacity-model.js'
import type { Prediction } from '../../src/model/predict.js'
import type { SpeedCheck } from '../../src/model/speed-check.js'
import { loadRun } from '../../src/result/load-run.js'
import { capacityGradient } from '../helpers/capacity-gradient.js'
import { runCli, spawnCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'
import { waitUntil } from '../helpers/wait.js'

/** A real llama.cpp run (3 slots, its own timings) kept with the rendered folders (see their README). */
const RENDERED = fileURLToPath(new URL('../fixtures/rendered/', import.meta.url))

function copyOf(name: string): string {
  const copy = join(tempDir(), name)
  cpSync(join(RENDERED, name), copy, { recursive: true })
  return copy
}

test('model DIR: every parameter of a llama.cpp run with its interval and basis, measured or assumed', async () => {
  const dir = copyOf('llama')
  const [shown, json] = await Promise.all([runCli(['model', dir]), runCli(['model', dir, '--json'])])
  assert.equal(shown.code, 0, shown.stderr)
  assert.match(shown.stdout, /slots\s+3\s+measured\s+the server’s own description/)
  assert.match(shown.stdout, /prefill per prompt token \(ms\)\s+[\d.]+ \([\d.]+–[\d.]+\)\s+measured/)
  assert.match(shown.stdout, /Reproducing the run/)
  const model = JSON.parse(json.stdout) as CapacityModel
  assert.equal(model.parameters.slots.value, 3)
  for (const parameter of Object.values(model.parameters))
    if (parameter !== null && parameter.low !== null && parameter.high !== null)
      assert.ok(
        parameter.low <= parameter.value && parameter.value <= parameter.high,
        JSON.stringify(parameter),
      )
})

test('predict DIR: longer prompts predict fewer requests per second, every point inside its interval', async () => {
  const dir = copyOf('llama')
  const predictAt = async (inputTokens: number) => {
    const out = await runCli([
      'predict',
      dir,
      '--input-tokens',
      String(inputTokens),
      '--output-tokens',
      '32',
      '--levels',
      '1,2,4,8',
      '--json',
    ])
    assert.equal(out.code, 0, out.stderr)
    return JSON.parse(out.stdout) as Prediction
  }
  // The four predictions are independent processes, started together.
  const [short, long, oneSlot, text] = await Promise.all([
    predictAt(64),
    predictAt(512),
    runCli(['predict', dir, '--slots', '1', '--levels', '1,2', '--json']),
    runCli([
      'predict',
      dir,
      '--input-tokens',
      '512',
      '--output-tokens',
      '32',
      '--slo',
      'ttft_p95_ms=2000',
      '--rate',
      '10',
    ]),
  ])
  for (const prediction of [short, long])
    for (const level of prediction.levels)
      for (const figure of [
        level.output_tokens_per_s,
        level.requests_per_s,
        level.ttft_ms.p50,
        level.e2e_ms.p50,
      ])
        assert.ok(
          figure !== undefined && figure.low <= figure.value && figure.value <= figure.high,
          JSON.stringify(level),
        )
  short.levels.forEach((level, i) => {
    const other = long.levels[i]
    assert.ok(
      other !== undefined && other.requests_per_s.value < level.requests_per_s.value,
      `c=${level.level}`,
    )
    assert.ok(other.ttft_ms.p50 !== undefined && level.ttft_ms.p50 !== undefined)
    assert.ok(
      other.ttft_ms.p50.value > level.ttft_ms.p50.value,
      `c=${level.level}: a longer prompt takes longer to prefill`,
    )
  })
  // --slots: a what-if of the server's configuration. One slot queues the second stream behind the first.
  assert.equal(oneSlot.code, 0, oneSlot.stderr)
  const queued = JSON.parse(oneSlot.stdout) as Prediction
  const [alone, behind] = queued.levels
  assert.ok(alone?.ttft_ms.p50 !== undefined && behind?.ttft_ms.p50 !== undefined)
  assert.ok(behind.ttft_ms.p50.value > 1.5 * alone.ttft_ms.p50.value, JSON.stringify(queued.levels))
  assert.ok(
    behind.output_tokens_per_s.value < 1.1 * alone.output_tokens_per_s.value,
    'one slot: no gain from a second stream',
  )
  assert.ok(
    queued.warnings.some((warning) => warning.includes('set by --slots')),
    JSON.stringify(queued.warnings),
  )
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /knee predicted at \d+|no knee predicted/)
  assert.match(text.stdout, /SLO capacity predicted at \d+|no level predicted to meet the SLOs/)
  assert.match(text.stdout, /\d+ replica\(s\) for 10 requests\/s/)
  // The SLO key in its older spelling is read as ttft_p95, and said once on stderr, naming the spelling now.
  assert.equal(text.stderr.match(/ttft_p95_ms is now ttft_p95/g)?.length, 1, text.stderr)
})

test('model and predict refuse what they cannot do, with exit 2 and the reason', async () => {
  const llama = copyOf('llama')
  const notModel = join(llama, 'bench_result.json')
  const cases: [string[], RegExp][] = [
    [['model', copyOf('emb')], /has no capacity model/],
    [['predict', llama, '--levels', '0,2'], /--levels must be a list of integers >= 1/],
    [['predict', llama, '--input-tokens', 'many'], /--input-tokens must be an integer >= 1/],
    [['predict', llama, '--slo', 'ttfr_p50_ms=100'], /predicts ttft, tpot and e2e, not ttfr/],
    [['predict', llama, '--rate=-1'], /--rate must be requests per second > 0/],
    [['predict'], /give one result folder/],
    [['model', '--calibrate'], /give the server with --url/],
    [['model', '--url', 'http://127.0.0.1:9'], /--url goes with --calibrate/],
    // Checked before the budget is spent (nothing listens on port 9: the check came first).
    [
      [
        'model',
        '--calibrate',
        '--url',
        'http://127.0.0.1:9',
        '--out',
        join(notModel, 'deeper', 'model.json'),
      ],
      /--out \S+: \S+bench_result\.json cannot be written \(ENOTDIR\); give another --out/,
    ],
    [
      ['model', '--calibrate', '--url', 'http://127.0.0.1:9', '--budget-s', '0'],
      /--budget-s must be a number > 0/,
    ],
    [
      ['predict', '--model-file', notModel],
      /--model-file \S+: its model cannot be used:\s+format: expected "llmbench.model\/1"/,
    ],
    [['predict', llama, '--model-file', notModel], /a result folder or --model-file, not both/],
  ]
  const outs = await Promise.all(cases.map(([args]) => runCli(args)))
  for (const [i, [args, message]] of cases.entries()) {
    const out = outs[i] as Awaited<ReturnType<typeof runCli>>
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stdout}${out.stderr}`)
    assert.match(out.stderr, message)
  }
})

test('model --calibrate against a server: the model file written into a folder it makes, and predict reads it', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulatorProcess(
    { slots: 4, prefill_base_ms: 20, prefill_ms_per_token: 0.2, decode_ms_per_seq: 2 },
    { args: ['--timings'] },
  )
  try {
    // A folder that does not exist yet: made as the file is written (a bench once lost a calibration
    // of a minute to an internal ENOENT at this point).
    const file = join(tempDir('llmbench-calibrate-'), 'models', 'sim.json')
    const calibrated = await runCli([
      'model',
      '--calibrate',
      '--url',
      sim.url,
      '--budget-s',
      '12',
      '--context',
      '1024',
      '--out',
      file,
    ])
    assert.equal(calibrated.code, 0, calibrated.stderr)
    assert.match(calibrated.stderr, new RegExp(`Wrote ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    const written = JSON.parse(readFileSync(file, 'utf8')) as { format: string; model: CapacityModel }
    assert.equal(written.format, 'llmbench.model/1')
    // A budget this small still holds the slot probe, which finds the simulator's 4.
    assert.equal(written.model.parameters.slots.value, 4, calibrated.stderr)
    assert.equal(written.model.parameters.slots.measured, true)
    // The batch-1 decode loop measured again at the end: how far it moved is in the intervals; where
    // the budget left could not hold the repeat (a loaded CI host: 6 s of 12 left after the probes),
    // the calibration says so and the intervals do not claim it.
    const check = (written as unknown as { calibration: { speed_check: SpeedCheck | null } }).calibration
      .speed_check
    if (check === null) {
      assert.match(calibrated.stderr, /speed check: the batch-1 decode point was not measured twice/)
      assert.doesNotMatch(written.model.interval?.basis ?? '', /measured again/)
    } else {
      assert.ok(Number.isFinite(check.change) && check.seconds_apart > 0, calibrated.stderr)
      assert.match(calibrated.stderr, /speed check: decode at batch 1, \d+-token prompts/)
      assert.match(written.model.interval?.basis ?? '', /how far one point moved when measured again/)
    }
    const predicted = await runCli(['predict', '--model-file', file, '--levels', '1,4', '--json'])
    assert.equal(predicted.code, 0, predicted.stderr)
  } finally {
    await sim.close()
  }
})

/** The simulator's own decode time per token (its `timings`), median over a folder's measured requests at one level. */
function serverDecodeMs(folder: string, level: number): number | null {
  const per = (loadRun(folder).records ?? [])
    .filter(
      (r) =>
        r.phase === 'measure' &&
        r.level === level &&
        r.server_timings != null &&
        (r.server_timings.predicted_n ?? 0) > 1,
    )
    .map((r) => (r.server_timings?.predicted_ms as number) / (r.server_timings?.predicted_n as number))
    .sort((a, b) => a - b)
  return per.length === 0 ? null : (per[Math.floor(per.length / 2)] as number)
}

test('predict --confirm runs the predicted workload on the same server and records predicted against measured', {
  timeout: 300_000,
}, async (t) => {
  const sim = await startSimulatorProcess(
    { slots: 4, prefill_base_ms: 20, prefill_ms_per_token: 0.2, decode_ms_per_seq: 2 },
    { args: ['--timings'] },
  )
  try {
    // The model is fitted on one run and checked on another: a host that slowed the simulator's timers
    // through one and not the other moves the measurement, not the model. The simulator's own timings
    // tell that apart; only then is it tried once more. (A .ci/run failed this at -13% and -21% with the
    // simulator's decode unmoved: the fit had kept a context term of 0.0029 ms/token from noise and
    // extrapolated it to 512-token prompts; the fit now asks 99% before it keeps one: model/fit.ts.)
    for (let attempt = 1; ; attempt++) {
      const out = tempDir('llmbench-predict-')
      // Outputs of 32 tokens (48 before): the held-out run differs from the fitted one in both lengths, and
      // its error was 0-3% against the 20% allowed, with a third less decoding.
      await capacityGradient(sim.url, out, { input_tokens: 64, output_tokens: 32 })
      const confirmDir = join(out, 'held-out')
      const confirmed = await runCli([
        'predict',
        out,
        '--input-tokens',
        '512',
        '--output-tokens',
        '24',
        '--confirm',
        '--requests',
        '12',
        '--out',
        confirmDir,
      ])
      assert.equal(confirmed.code, 0, confirmed.stderr)
      assert.match(confirmed.stdout, /Confirmed \(output tokens\/s/)
      const file = join(confirmDir, 'prediction.json')
      assert.ok(existsSync(file), 'prediction.json is written beside the confirmation run')
      const saved = JSON.parse(readFileSync(file, 'utf8')) as {
        prediction: Prediction
        confirmation: { level: number; error: number; measured_tokens_per_s: number }[]
      }
      assert.ok(
        saved.confirmation.length >= 1 && saved.confirmation.length <= 2,
        JSON.stringify(saved.confirmation),
      )
      // At the same level (the same batch) the simulator's own step differs 6-10% between the two
      // workloads on a quiet host; past 15% the host moved.
      const speeds = saved.confirmation.map(({ level }) => ({
        level,
        fitted: serverDecodeMs(out, level),
        held: serverDecodeMs(confirmDir, level),
      }))
      const moved = Math.max(
        ...speeds.map(({ fitted, held }) =>
          fitted === null || held === null ? 0 : Math.abs(held / fitted - 1),
        ),
      )
      t.diagnostic(
        `try ${attempt}: ${saved.confirmation.map((c) => `c=${c.level} error ${(c.error * 100).toFixed(1)}%`).join(', ')}; ` +
          `the simulator's own decode, fitted → confirmed: ${speeds.map(({ level, fitted, held }) => `c=${level} ${fitted?.toFixed(2)} → ${held?.toFixed(2)} ms/token`).join(', ')}`,
      )
      // The model of a simulator is the simulator's own: a held-out workload comes within 20%.
      const within = saved.confirmation.every((level) => Math.abs(level.error) <= 0.2)
      if (within || attempt === 2 || moved <= 0.15) {
        assert.ok(within, JSON.stringify(saved.confirmation))
        break
      }
    }
  } finally {
    await sim.close()
  }
})

test('an interrupted predict --confirm still writes prediction.json, with the levels that finished and interrupted: true (issue 36)', {
  timeout: 120_000,
}, async () => {
  // A slow server (a second a request), so the confirming run is surely in flight when the signal comes.
  const sim = await startSimulatorProcess({ slots: 2, decode_base_ms: 40 }, { args: ['--model', 'tiny'] })
  try {
    const dir = copyOf('llama')
    const file = join(dir, 'bench_result.json')
    const result = JSON.parse(readFileSync(file, 'utf8')) as { meta: { target: { base_url: string } } }
    result.meta.target.base_url = sim.url.replace(/\/v1$/, '')
    writeFileSync(file, JSON.stringify(result))
    const out = join(dir, 'held-out')
    const run = spawnCli([
      'predict',
      dir,
      '--output-tokens',
      '24',
      '--confirm',
      '--requests',
      '40',
      '--out',
      out,
    ])
    await waitUntil(
      () => /confirm: running/.test(run.stderr()) && existsSync(join(out, 'requests.jsonl')),
      'the confirming run under way',
      60_000,
    )
    run.child.kill('SIGINT')
    assert.equal(await run.exited, 130, run.stderr())
    const saved = JSON.parse(readFileSync(join(out, 'prediction.json'), 'utf8')) as {
      interrupted?: boolean
      prediction: Prediction
      confirmation: unknown[]
    }
    assert.equal(saved.interrupted, true)
    assert.ok(saved.prediction.levels.length > 0)
    assert.ok(Array.isArray(saved.confirmation))
  } finally {
    await sim.close()
  }
})
