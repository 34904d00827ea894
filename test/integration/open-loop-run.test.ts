import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'

/**
 * One slot, 5 ms of prefill and 20 tokens at 5 ms each: about 105 ms a request, so the server serves
 * a little under 10 requests per second, whatever is offered.
 */
const ONE_SLOT = {
  slots: 1,
  prefill_base_ms: 5,
  prefill_ms_per_token: 0,
  decode_base_ms: 5,
  decode_ms_per_seq: 0,
}

test('request-rate mode: below capacity the level keeps up and is healthy; above it, overloaded with offered against served', {
  timeout: 90_000,
}, async (t) => {
  const sim = await startSimulator(ONE_SLOT)
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1],
      requests: 40,
      output_tokens: 20,
      out_dir: out,
      preflight: false,
    })
    config.load.mode = 'request_rate'
    // Poisson arrivals at half the capacity, then at two and a half times it.
    config.load.rates = [5, 25]
    config.workload.ignore_eos = true
    const result = await runToResult(config, out)
    const [below, above] = result.levels
    assert.ok(below !== undefined && above !== undefined)
    for (const level of result.levels)
      t.diagnostic(
        `rate ${level.value}/s: ${level.verdict}; ${JSON.stringify(level.open_loop)}; ${level.advice}`,
      )

    assert.ok(below.open_loop != null, 'figures at 5/s')
    assert.equal(below.success_rate, 1)
    assert.ok(below.open_loop.served_per_s_high >= below.open_loop.offered_per_s, 'served what was offered')
    assert.ok(below.open_loop.in_flight_growth_low <= 0, 'nothing piled up')
    assert.notEqual(below.verdict, 'overloaded')
    // Every written request says how long it waited for its connection, a part of its lateness.
    const records = readRecords(join(out, RECORDS_FILE)).records.filter((r) => r.phase === 'measure')
    assert.equal(records.length, 80)
    for (const r of records) {
      assert.ok(
        r.connection_wait_ms !== undefined && r.connection_wait_ms >= 0,
        JSON.stringify(r).slice(0, 200),
      )
      assert.ok(
        r.connection_wait_ms <= r.sent_at - r.scheduled_at + 1,
        'connecting is part of the lateness (a timer may fire a hair early)',
      )
    }

    assert.ok(above.open_loop != null, 'figures at 25/s')
    assert.equal(above.success_rate, 1, 'every request still succeeded: only the rates say it')
    assert.ok(above.open_loop.served_per_s < 11, `served ${above.open_loop.served_per_s}/s on a ~10/s server`)
    assert.ok(above.open_loop.served_per_s_high < above.open_loop.offered_per_s)
    assert.ok(above.open_loop.in_flight_last > above.open_loop.in_flight_first)
    assert.equal(above.verdict, 'overloaded')
    assert.match(
      above.advice,
      new RegExp(
        `could not keep up: served ${above.open_loop.served_per_s.toFixed(2)}/s .*of ${above.open_loop.offered_per_s.toFixed(2)}/s offered; ` +
          `in flight grew ${above.open_loop.in_flight_first.toFixed(1)} → ${above.open_loop.in_flight_last.toFixed(1)}`,
      ),
    )
  } finally {
    await sim.close()
  }
})
