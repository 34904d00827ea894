// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { INTERRUPT_GRACE_MS } from '../../src/run/run-gradient.js'
import { LENGTH_PROBE_MIN_TOKENS, TIMED_PROBES, WARMUP_PROBES } from '../../src/run/setup/probe-timing.js'
import { startSimulator } from '../../src/sim/server.js'
import { simRunArgs, spawnCli } from '../helpers/cli.js'
import { startHoldingServer } from '../helpers/holding-server.js'
import { tempDir } from '../helpers/run-config.js'

// SIGHUP comes when the terminal or SSH session closes, SIGTERM when Kubernetes stops a pod: both
// are interrupts like Ctrl-C, never a death that loses the level in flight and the partial result.
for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
  test(`${signal} mid-run: stops issuing, drains, writes a partial result and exits 130`, {
    timeout: 60_000,
  }, async () => {
    const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 5 })
    const out = join(tempDir(), 'result')
    try {
      const { child, exited, stderr } = spawnCli(
        simRunArgs(sim.url, out, { levels: '1,2,4', duration: 3, warmup: 0, 'output-tokens': 20 }),
      )
      let sent = false
      child.stderr?.on('data', () => {
        // Once the first level is summarized, the second one is running.
        if (!sent && stderr().includes('level 1:')) {
          sent = true
          child.kill(signal)
        }
      })
      const code = await exited
      assert.equal(code, 130, stderr())
      assert.match(stderr(), /interrupt: no new requests/)
      const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
      assert.equal(summary.meta.partial, true)
      // No capacity model from levels cut short (issue 36: never predict from what was not measured;
      // and its replay was most of the seconds between the signal and the exit).
      assert.equal(summary.model, undefined)
      assert.equal(summary.levels[0].value, 1)
      assert.ok(!summary.levels.some((level: { value: number }) => level.value === 4))
      const { tornLastLine } = readRecords(join(out, 'requests.jsonl'))
      assert.equal(tornLastLine, false)
    } finally {
      await sim.close()
    }
  })
}

/** Sends `signal` once `ready` resolves; the child's exit code and the milliseconds it took to exit. */
async function signalWhen(
  run: ReturnType<typeof spawnCli>,
  ready: Promise<void>,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; exitMs: number }> {
  await ready
  const sentAt = performance.now()
  run.child.kill(signal)
  const code = await run.exited
  return { code, exitMs: performance.now() - sentAt }
}

/** The default planned prompt (256 tokens) gets one more probe at its length (see probe-timing.ts). */
const DEFAULT_INPUT_TOKENS = 256
/** The plan's timing probes after the preflight (see probe-timing.ts). */
const SET_UP_PROBES = WARMUP_PROBES + TIMED_PROBES + (DEFAULT_INPUT_TOKENS >= LENGTH_PROBE_MIN_TOKENS ? 1 : 0)

/** Far below the 120 s request timeout a held request would otherwise wait out. */
const PROMPT_EXIT_MS = 10_000

// The preflight and calibration requests have nothing to drain into: a stop cuts them at once.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} while the preflight request is held: exit 130 at once, the cut request recorded`, {
    timeout: 60_000,
  }, async () => {
    const server = await startHoldingServer(0)
    const out = join(tempDir(), 'result')
    try {
      const run = spawnCli(simRunArgs(server.url, out, { levels: '1', requests: 2, warmup: 0 }))
      const { code, exitMs } = await signalWhen(run, server.holding, signal)
      assert.equal(code, 130, run.stderr())
      assert.ok(exitMs < PROMPT_EXIT_MS, `exited ${exitMs.toFixed(0)} ms after ${signal}`)
      assert.match(
        run.stderr(),
        /interrupted during the preflight: no level was run; no result folder was written/,
      )
      assert.doesNotMatch(run.stderr(), /preflight failed/)
      // No level started: no result folder is left behind.
      assert.equal(existsSync(out), false)
      assert.equal(server.requests(), 1)
    } finally {
      await server.close()
    }
  })
}

test('SIGTERM while a calibration probe is held: exit 130 at once, no further probe sent', {
  timeout: 60_000,
}, async () => {
  // The preflight and the timing probes are answered; the first calibration probe is held.
  const server = await startHoldingServer(1 + SET_UP_PROBES)
  const out = join(tempDir(), 'result')
  try {
    const run = spawnCli(simRunArgs(server.url, out, { levels: '1', requests: 2, warmup: 0 }))
    const { code, exitMs } = await signalWhen(run, server.holding, 'SIGTERM')
    assert.equal(code, 130, run.stderr())
    assert.ok(exitMs < PROMPT_EXIT_MS, `exited ${exitMs.toFixed(0)} ms after SIGTERM`)
    assert.match(run.stderr(), /preflight ok/)
    assert.match(run.stderr(), /interrupted during the calibration: no level was run/)
    assert.equal(existsSync(out), false, 'no level started: no result folder')
    assert.equal(server.requests(), 2 + SET_UP_PROBES, 'no probe is sent after the stop')
  } finally {
    await server.close()
  }
})

test('SIGTERM while every request of a level is held: cut after the drain grace, recorded, partial result, exit 130', {
  timeout: 60_000,
}, async () => {
  const server = await startHoldingServer(1 + SET_UP_PROBES)
  const out = join(tempDir(), 'result')
  try {
    const run = spawnCli(
      simRunArgs(server.url, out, { levels: '2', requests: 4, warmup: 0, 'no-calibrate': true }),
    )
    const { code, exitMs } = await signalWhen(run, server.holding, 'SIGTERM')
    assert.equal(code, 130, run.stderr())
    // The in-flight requests get INTERRUPT_GRACE_MS to finish, then are cut.
    assert.ok(exitMs < INTERRUPT_GRACE_MS + PROMPT_EXIT_MS, `exited ${exitMs.toFixed(0)} ms after SIGTERM`)
    const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(summary.meta.partial, true)
    const { records, tornLastLine } = readRecords(join(out, 'requests.jsonl'))
    assert.equal(tornLastLine, false)
    const measured = records.filter((record) => record.phase === 'measure')
    assert.ok(measured.length >= 1, 'the held requests are recorded')
    for (const record of measured) assert.match(record.error?.message ?? '', /interrupted/)
  } finally {
    await server.close()
  }
})

test('SIGTERM while a shard asks the server for its clock: exit 130 at once, nothing of the run sent', {
  timeout: 60_000,
}, async () => {
  // The first request of a shard is GET /v1/models, for the server's Date header: held here.
  const server = await startHoldingServer(0, { holdGets: true })
  const out = join(tempDir(), 'result')
  try {
    const run = spawnCli(simRunArgs(server.url, out, { levels: '1', requests: 2, warmup: 0, shard: '0/2' }))
    const { code, exitMs } = await signalWhen(run, server.holding, 'SIGTERM')
    assert.equal(code, 130, run.stderr())
    assert.ok(exitMs < PROMPT_EXIT_MS, `exited ${exitMs.toFixed(0)} ms after SIGTERM`)
    assert.match(run.stderr(), /interrupt: stopping before the load/)
    assert.match(run.stderr(), /interrupted during the set-up: no request of the run was sent/)
    assert.equal(server.requests(), 1, 'no preflight after the stop')
  } finally {
    await server.close()
  }
})
