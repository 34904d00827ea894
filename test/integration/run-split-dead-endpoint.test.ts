import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SIM_MODEL } from '../../src/sim/server.js'
import { startHeaderServer } from '../helpers/header-server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * Issue 36 item 12, against real servers: one endpoint answering (a simulator of 4 slots) beside one
 * that passes the preflight and then answers every request "HTTP 500" (a server that died after the
 * start). The dead one is failed, the live one keeps its curve, and the
 * run's levels are judged on the live one: not "overloaded: back off" for the dead one's errors.
 */
test('an endpoint answering 500 to everything is a failed target; the run is judged on the live one', {
  timeout: 120_000,
}, async () => {
  const live = await startSimulator({ slots: 4, prefill_base_ms: 20, decode_base_ms: 5 })
  let posts = 0
  const dead = await startHeaderServer({
    fail: (request) =>
      request.method === 'POST' && ++posts > 1
        ? { status: 500, body: '{"error":{"message":"internal failure"}}' }
        : null,
  })
  const out = tempDir()
  try {
    const config = testConfig(live.url, SIM_MODEL, {
      levels: [2, 4],
      requests: 16,
      output_tokens: 8,
      out_dir: out,
    })
    config.target.more_base_urls = [`${dead.origin}/v1`]
    const result = await runToResult(config, out)
    const [answering, failing] = result.targets ?? []
    assert.equal(answering?.failed, undefined, answering?.saturation_summary)
    // The same 500 for every request, none answered: the target is misconfigured, not saturated.
    assert.match(
      failing?.failed ?? '',
      /^misconfigured: 0 of \d+ requests succeeded; HTTP 500: internal failure/,
    )
    for (const level of result.levels) {
      assert.ok(level.failed > 0, 'the dead endpoint got its share of every level')
      assert.notEqual(level.verdict, 'overloaded', `level ${level.value}: ${level.advice}`)
      assert.match(
        level.advice,
        /from a failed target \(http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(llmbench-sim\)\), not load/,
      )
    }
    assert.match(result.saturation_summary, /a target failed/)
  } finally {
    await live.close()
    await dead.close()
  }
})
