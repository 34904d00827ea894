import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openLoopAdvice, openLoopOverloaded, openLoopShortfall } from '../../src/analysis/open-loop.js'
import { levelVerdict } from '../../src/analysis/verdict.js'
import {
  growthInterval,
  MIN_WINDOW_ARRIVALS,
  mannKendallZ,
  type OpenLoopFigures,
  openLoopFigures,
  servedInterval,
  WAIT_TREND_Z,
} from '../../src/metrics/open-loop-figures.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

/**
 * Arrivals every `gapMs` served by `slots` FIFO slots taking `serviceMs` each: the open loop as a
 * queue of known capacity (slots / serviceMs), so keeping up or not is known before the figures.
 */
function queueRecords(count: number, gapMs: number, slots: number, serviceMs: number): RequestRecord[] {
  const free = new Array<number>(slots).fill(0)
  return Array.from({ length: count }, (_, i) => {
    const arrival = i * gapMs
    const slot = free.indexOf(Math.min(...free))
    const start = Math.max(arrival, free[slot] as number)
    const end = start + serviceMs
    free[slot] = end
    return makeRecord({
      seq: i,
      scheduled_at: arrival,
      sent_at: arrival,
      end_at: end,
      token_times: [start + 10, end],
    })
  })
}

const KEPT_UP: OpenLoopFigures = {
  window_s: 10,
  arrivals: 40,
  completions: 40,
  offered_per_s: 4,
  served_per_s: 4,
  served_per_s_low: 2.86,
  served_per_s_high: 5.45,
  in_flight_first: 2,
  in_flight_last: 2.2,
  in_flight_growth_low: -3.8,
  in_flight_growth_high: 4.2,
}

test('a queue that keeps up: served equals offered within its interval, nothing piles up, not overloaded', () => {
  // 4/s offered to 2 slots of 400 ms: capacity 5/s.
  const figures = openLoopFigures(queueRecords(60, 250, 2, 400))
  assert.ok(figures !== null)
  assert.ok(Math.abs(figures.offered_per_s - 4) < 0.1, `offered ${figures.offered_per_s}`)
  assert.ok(
    figures.served_per_s_low <= figures.offered_per_s && figures.offered_per_s <= figures.served_per_s_high,
  )
  assert.ok(Math.abs(figures.in_flight_last - figures.in_flight_first) < 0.5, JSON.stringify(figures))
  assert.ok(figures.in_flight_growth_low <= 0)
  assert.equal(openLoopOverloaded({ open_loop: figures }), false)
  assert.equal(openLoopShortfall({ open_loop: figures }), null)
})

test('a queue that cannot keep up: served below offered beyond its interval, in flight grows, overloaded', () => {
  // 4/s offered to 1 slot of 500 ms: capacity 2/s.
  const figures = openLoopFigures(queueRecords(60, 250, 1, 500))
  assert.ok(figures !== null)
  assert.ok(Math.abs(figures.served_per_s - 2) < 0.1, `served ${figures.served_per_s}`)
  assert.ok(figures.served_per_s_high < figures.offered_per_s, JSON.stringify(figures))
  assert.ok(figures.in_flight_last > figures.in_flight_first + 5, JSON.stringify(figures))
  assert.ok(figures.in_flight_growth_low > 0)
  assert.equal(openLoopOverloaded({ open_loop: figures }), true)
  const reason = openLoopShortfall({ open_loop: figures }) ?? ''
  assert.match(
    reason,
    new RegExp(
      `served ${figures.served_per_s.toFixed(2)}/s .* of ${figures.offered_per_s.toFixed(2)}/s offered`,
    ),
  )
  assert.match(
    reason,
    new RegExp(`in flight grew ${figures.in_flight_first.toFixed(1)} → ${figures.in_flight_last.toFixed(1)}`),
  )
})

test('the predicate, on each side of each threshold', () => {
  const at = (changes: Partial<OpenLoopFigures>) =>
    openLoopOverloaded({ open_loop: { ...KEPT_UP, ...changes } })
  assert.equal(at({}), false)
  // Served: the interval's top just above the offered rate, then just below it.
  assert.equal(at({ served_per_s: 3.2, served_per_s_high: 4.01 }), false)
  assert.equal(at({ served_per_s: 3.2, served_per_s_high: 3.99 }), true)
  // In flight: growth whose interval reaches 0, then one just above it.
  assert.equal(at({ in_flight_last: 9, in_flight_growth_low: 0 }), false)
  assert.equal(at({ in_flight_last: 9, in_flight_growth_low: 0.01 }), true)
  assert.equal(openLoopOverloaded({ open_loop: null }), false, 'concurrency mode: nothing to judge')
  assert.equal(openLoopOverloaded({}), false, 'results of older versions')
})

test('an open loop that could not keep up is overloaded with every request ok, and its advice has the figures', () => {
  const open_loop = {
    ...KEPT_UP,
    served_per_s: 2.44,
    served_per_s_low: 1.8,
    served_per_s_high: 3.1,
    offered_per_s: 4.5,
  }
  const level = {
    value: 4.5,
    requests: 40,
    success_rate: 1,
    errors: { timeout: 0, http_4xx: 0, http_429: 0, http_5xx: 0, connection: 0, stream: 0, other: 0 },
    client: { bound: false } as never,
  }
  assert.equal(levelVerdict({ ...level, open_loop: KEPT_UP }, null), 'healthy')
  assert.equal(levelVerdict({ ...level, open_loop }, null), 'overloaded')
  const advice = openLoopAdvice({ open_loop, verdict: 'overloaded' }) ?? ''
  assert.match(
    advice,
    /could not keep up: served 2\.44\/s \(95% 1\.80–3\.10\) of 4\.50\/s offered; in flight went 2\.0 → 2\.2 over 10\.0 s/,
  )
  assert.equal(
    openLoopAdvice({ open_loop, verdict: 'misconfigured' }),
    null,
    'a misconfigured level keeps its own advice',
  )
})

test('Poisson interval on a count: Byar matches the exact (Garwood) interval', () => {
  // Exact bounds: 0 → [0, 3.689], 1 → [0.0253, 5.572], 10 → [4.795, 18.39].
  const near = (value: number, exact: number) =>
    assert.ok(Math.abs(value - exact) < 0.03, `${value} vs ${exact}`)
  assert.equal(servedInterval(0).low, 0)
  near(servedInterval(0).high, 3.689)
  near(servedInterval(1).low, 0.0253)
  near(servedInterval(1).high, 5.572)
  near(servedInterval(10).low, 4.795)
  near(servedInterval(10).high, 18.39)
  const growth = growthInterval(4, 5)
  assert.ok(Math.abs(growth.low - (1 - 1.96 * 3)) < 1e-9 && Math.abs(growth.high - (1 + 1.96 * 3)) < 1e-9)
})

test('open_loop is null in concurrency mode, and with too few arrivals in the window', () => {
  const records = queueRecords(60, 250, 1, 500)
  const options = { percentiles: [50, 95, 99], timeoutMs: 60_000, slos: [] }
  const stats = { cpu_percent: 0, loops: [] }
  assert.equal(summarizeLevel(1, records, { ...options, mode: 'concurrency' }, stats).open_loop, null)
  assert.notEqual(summarizeLevel(1, records, { ...options, mode: 'request_rate' }, stats).open_loop, null)
  // The window starts at the first completion (500 ms): arrivals after it (the 4th on) are counted.
  const few = queueRecords(MIN_WINDOW_ARRIVALS + 3, 250, 1, 500)
  assert.equal(openLoopFigures(few.slice(0, MIN_WINDOW_ARRIVALS + 2)), null)
  assert.equal(openLoopFigures(few)?.arrivals, MIN_WINDOW_ARRIVALS)
})

test('wait trend: a queue that falls behind makes every arrival wait longer; one that keeps up shows no trend', () => {
  const random = seededRandom(7)
  const steady = Array.from({ length: 40 }, () => 50 + random() * 40)
  const growing = Array.from({ length: 40 }, (_, i) => 50 + i * 25 + random() * 40)
  assert.ok(Math.abs(mannKendallZ(steady)) < WAIT_TREND_Z, `steady z ${mannKendallZ(steady)}`)
  assert.ok(mannKendallZ(growing) > WAIT_TREND_Z, `growing z ${mannKendallZ(growing)}`)
  assert.ok(mannKendallZ([...growing].reverse()) < -WAIT_TREND_Z)
  // The trend alone is not enough: fewer must also have been served than offered.
  const figures = {
    window_s: 8,
    arrivals: 37,
    completions: 27,
    offered_per_s: 4.66,
    served_per_s: 3.4,
    served_per_s_low: 2.24,
    served_per_s_high: 4.95,
    in_flight_first: 7.5,
    in_flight_last: 11.1,
    in_flight_growth_low: -4.8,
    in_flight_growth_high: 12.1,
    wait_trend_z: 5.2,
  }
  assert.equal(openLoopOverloaded({ open_loop: figures }), true)
  assert.match(
    openLoopShortfall({ open_loop: figures }) ?? '',
    /waited longer than the last \(wait trend z = 5\.2\)/,
  )
  assert.equal(openLoopOverloaded({ open_loop: { ...figures, served_per_s: 4.7 } }), false)
  assert.equal(openLoopOverloaded({ open_loop: { ...figures, wait_trend_z: 2.9 } }), false)
})
