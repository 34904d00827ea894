import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bestOffset } from '../../src/run/shard/coordination-protocol.js'
import { CoordinationError, CoordinatorLink } from '../../src/run/shard/coordinator-link.js'
import { startCoordinator } from '../../src/run/shard/coordinator-server.js'
import { wallClock } from '../../src/run/shard/shard-clock.js'
import { StopSignal } from '../../src/run/stop-signal.js'

test('bestOffset keeps the exchange with the shortest round trip, NTP style', () => {
  // The shard's clock is 100 ms behind: coordinator = shard + 100. Delays 5 ms out, 1 ms back; then 1 and 1.
  const slow = { t0: 0, t1: 105, t2: 106, t3: 7 }
  const fast = { t0: 20, t1: 121, t2: 121, t3: 22 }
  const offset = bestOffset([slow, fast])
  assert.deepEqual(offset, { offset_ms: 100, bound_ms: 1, rtt_ms: 2 })
  // From the slow one alone, the estimate is off by the asymmetry (2 ms), within its own bound (3 ms).
  const alone = bestOffset([slow])
  assert.equal(alone.offset_ms, 102)
  assert.equal(alone.bound_ms, 3)
  assert.throws(() => bestOffset([]), /no samples/)
})

const identity = (shard: number, digest = 'd1') => ({
  shard,
  count: 2,
  host: `host-${shard}`,
  config_digest: digest,
})

test('two shards on shifted clocks: offsets recovered within their bounds, one start instant, a lost shard ends the level', {
  timeout: 60_000,
}, async () => {
  const lines: string[] = []
  const coordinator = await startCoordinator({
    shards: 2,
    host: '127.0.0.1',
    port: 0,
    log: (l) => lines.push(l),
  })
  const shifts = [-300, 900]
  const stops = shifts.map(() => new StopSignal())
  const links: CoordinatorLink[] = []
  try {
    for (const [shard, shift] of shifts.entries())
      links.push(
        await CoordinatorLink.connect(coordinator.url, identity(shard), {
          clock: wallClock(shift),
          stop: stops[shard] as StopSignal,
          log: () => {},
        }),
      )
    // Another run's shard, and a shard index twice, are refused.
    await assert.rejects(
      CoordinatorLink.connect(coordinator.url, identity(1, 'other'), {
        clock: wallClock(0),
        stop: new StopSignal(),
        log: () => {},
      }),
      (error: unknown) =>
        error instanceof CoordinationError && /registered already|another run/.test(error.message),
    )
    for (const [shard, link] of links.entries()) {
      // coordinator − shard = −shift: within the measured bound (both clocks are this machine's).
      const error = Math.abs(link.info.offset_ms + (shifts[shard] as number))
      assert.ok(
        error <= link.info.bound_ms + 0.01,
        `shard ${shard}: off by ${error} ms, bound ${link.info.bound_ms}`,
      )
    }
    // Level 0 on both: one instant, each shard's start on the true clock (its own minus its shift).
    const trueStarts = await Promise.all(
      links.map(async (link) => {
        await link.beforeLevel(0, 2)
        return wallClock(0)()
      }),
    )
    const entries = links.map((link) => link.info.levels[0])
    assert.equal(entries[0]?.start_at_ms, entries[1]?.start_at_ms, 'one instant for all')
    const alignment = (links[0]?.info.bound_ms ?? 0) + (links[1]?.info.bound_ms ?? 0)
    const spread = Math.abs((trueStarts[0] as number) - (trueStarts[1] as number))
    assert.ok(
      spread <= 10 + alignment,
      `started ${spread.toFixed(1)} ms apart (allowed 10 + ${alignment} ms)`,
    )
    await Promise.all(links.map((link) => link.afterLevel(0, false)))
    assert.deepEqual(
      links.map((link) => link.info.levels[0]?.complete),
      [true, true],
    )
    // Level 1: both start, then shard 1 vanishes (its connections cut, as a killed process's are).
    await Promise.all(links.map((link) => link.beforeLevel(1, 4)))
    const before = Date.now()
    await (links[1] as CoordinatorLink).close()
    await links[0]?.afterLevel(1, false)
    const report = await coordinator.done
    assert.equal(stops[0]?.requested, true, 'the surviving shard was told to stop')
    const cut = links[0]?.info.levels[1]
    assert.equal(cut?.complete, false)
    assert.equal(cut?.incomplete?.shard, 1)
    assert.ok((cut?.incomplete?.at_ms ?? 0) >= before - 50, 'the time the shard was lost')
    assert.equal(report.levels[1]?.complete, false)
    assert.equal(report.incomplete?.shard, 1)
    assert.equal(report.levels[0]?.complete, true)
    assert.ok(
      lines.some((line) => /shard 1 lost .* during level 4/.test(line)),
      lines.join('\n'),
    )
  } finally {
    await Promise.all(links.map((link) => link.close()))
    await coordinator.close()
  }
})
