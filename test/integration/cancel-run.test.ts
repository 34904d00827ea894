/**
 * A run with --cancel-share against the simulator: the cancelled requests are counted apart (not
 * successes, not failures, in no latency figure), and the level says whether the server freed
 * their slots, from the simulator's vllm:num_requests_running: freed by the honest simulator, not
 * freed by one that decodes on after the client closed (quirks.ignore_disconnect).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cancelNotes } from '../../src/report/cancel-notes.js'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const STREAMS = 4
const REQUESTS = 16

async function cancelRun(ignoreDisconnect: boolean) {
  // Slots to spare: a request a leaking server decodes on for no one runs beside the client's
  // streams (running above them), rather than queueing a stream's next request.
  const sim = await startSimulator({
    slots: 2 * STREAMS,
    prefill_base_ms: 2,
    decode_base_ms: 10,
    decode_ms_per_seq: 0,
    quirks: { ignore_disconnect: ignoreDisconnect },
  })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [STREAMS],
      requests: REQUESTS,
      output_tokens: 100,
      out_dir: out,
      preflight: false,
    })
    config.load.cancel_share = 0.5
    config.load.cancel_after = 'first'
    config.server_metrics.interval_s = 0.2
    const outcome: RunOutcome = await runGradient({
      config,
      apiKey: null,
      outDir: out,
      log: () => {},
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done')
    const result = (outcome as Extract<RunOutcome, { kind: 'done' }>).result
    return { result, out, stats: sim.stats() }
  } finally {
    await sim.close()
  }
}

test('cancelled requests are their own outcome, and the honest simulator frees their slots', {
  timeout: 120_000,
}, async () => {
  const { result, out, stats } = await cancelRun(false)
  const level = result.levels[0]
  assert.ok(level !== undefined)
  const cancellation = level.cancellation
  assert.ok(cancellation !== undefined, 'the level counts its cancellations')
  // The Weyl pick holds the share within a request of the level's count.
  assert.ok(Math.abs(cancellation.cancelled - REQUESTS / 2) <= 1, `${cancellation.cancelled} cancelled`)
  assert.equal(level.cancelled, cancellation.cancelled)
  assert.equal(level.requests + cancellation.cancelled, REQUESTS)
  assert.equal(level.failed, 0, 'a cancel is no failure')
  assert.equal(level.ok, level.requests)
  assert.equal(cancellation.after_events, 1)
  assert.equal(cancellation.ttft_ms.count, cancellation.cancelled)
  // E2E is over the whole replies only: none ends at a first token.
  assert.equal(level.e2e_ms.count, level.ok)
  assert.ok(
    (level.e2e_ms.min ?? 0) > 500,
    `E2E min ${level.e2e_ms.min} ms: a reply of 100 tokens at 10 ms each`,
  )
  assert.equal(stats.aborted, cancellation.cancelled, 'the simulator saw each cancel as a client gone')
  assert.equal(cancellation.slots?.verdict, 'freed', JSON.stringify(cancellation.slots))
  // Both readings: the running count and the generated-tokens counter.
  assert.match(cancellation.slots?.reason ?? '', /running count fell with the cancellations/)
  assert.match(cancellation.slots?.reason ?? '', /it stopped generating for them/)
  assert.equal(cancellation.forgone_tokens, cancellation.cancelled * 100 - cancellation.output_tokens)
  const [note] = cancelNotes(result)
  assert.match(
    note ?? '',
    new RegExp(
      `^c=4: ${cancellation.cancelled} request\\(s\\) cancelled at the first token .*the server freed their slots`,
    ),
  )
  // `report` reads the same from the records and the scrapes.
  const run = loadRun(out)
  assert.ok(run.records !== null, 'the records are read back')
  const again = buildResult(run.records, run.result.meta, run.serverScrapes)
  assert.deepEqual(again.levels[0]?.cancellation, cancellation)
})

test('a leaking server (decodes on after the client closed): the level says the slots were not freed', {
  timeout: 120_000,
}, async () => {
  const { result, stats } = await cancelRun(true)
  const cancellation = result.levels[0]?.cancellation
  assert.ok(cancellation !== undefined)
  assert.equal(stats.aborted, 0, 'the leaking simulator cancelled nothing')
  assert.equal(cancellation.slots?.verdict, 'not_freed', JSON.stringify(cancellation.slots))
  assert.ok((cancellation.slots?.excess_median ?? 0) >= 1)
  assert.match(cancellation.slots?.reason ?? '', /decoded on for clients that had closed/)
  assert.match(cancelNotes(result)[0] ?? '', /the server did NOT free their slots/)
})
