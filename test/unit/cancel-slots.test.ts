import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIN_SLOT_SCRAPES, slotCheck } from '../../src/server-metrics/cancel-slots.js'
import type { ServerScrape } from '../../src/server-metrics/scrape-file.js'

const URL_A = 'http://127.0.0.1:9/metrics'
const WINDOW = { start: 0, end: 10_000 }

/** A scrape at `at` ms reading these gauges. */
function scrape(at: number, gauges: { running?: number; waiting?: number }, url = URL_A): ServerScrape {
  return {
    kind: 'scrape',
    url,
    at,
    duration_ms: 5,
    values: { gauges, counters: {}, histograms: {}, sources: {} },
  }
}

/** One scrape a second inside the window, each with (running, waiting). */
function series(pairs: [number, number][]): ServerScrape[] {
  return pairs.map(([running, waiting], i) => scrape(1000 * (i + 1), { running, waiting }))
}

test('a server that held no more than the streams freed the slots', () => {
  const check = slotCheck(
    series([
      [4, 0],
      [3, 0],
      [4, 0],
      [5, 0],
      [4, 0],
    ]),
    { value: 4 },
    WINDOW,
    null,
  )
  assert.equal(check.verdict, 'freed')
  assert.equal(check.excess_median, 0)
  assert.equal(check.excess_max, 1, 'one scrape caught a close the server had not seen yet')
  assert.equal(check.scrapes, 5)
  assert.match(
    check.reason,
    /held 4 request\(s\) running or waiting \(median of 5 scrapes, most 5\) while the client kept 4/,
  )
})

test('running plus waiting above the streams: not freed, by how many', () => {
  // The slots are full (4 running) and new requests wait behind requests nobody reads any more.
  const check = slotCheck(
    series([
      [4, 2],
      [4, 3],
      [4, 2],
      [4, 1],
    ]),
    { value: 4 },
    WINDOW,
    null,
  )
  assert.equal(check.verdict, 'not_freed')
  assert.equal(check.excess_median, 2)
  assert.equal(check.excess_max, 3)
})

test('the steady window is read when enough scrapes fell in it; the ramp outside it is not', () => {
  const scrapes = [
    scrape(500, { running: 1 }),
    scrape(1500, { running: 2 }),
    ...[3000, 4000, 5000, 6000].map((at) => scrape(at, { running: 6 })),
    scrape(9000, { running: 1 }),
  ]
  const steady = { start: 2500, end: 7000 }
  const check = slotCheck(scrapes, { value: 4 }, WINDOW, steady)
  assert.equal(check.scrapes, 4)
  assert.equal(check.verdict, 'not_freed')
  // Without it, the ramp's scrapes pull the median down to the streams.
  assert.equal(slotCheck(scrapes, { value: 4 }, WINDOW, null).scrapes, 7)
})

test('what cannot be told says why', () => {
  const noCount = slotCheck([scrape(1000, { waiting: 0 })], { value: 4 }, WINDOW, null)
  assert.equal(noCount.verdict, 'cannot_tell')
  assert.match(noCount.reason, /publishes no running-requests count/)
  assert.equal(noCount.excess_median, null)

  const few = slotCheck(
    series([
      [4, 0],
      [4, 0],
    ]),
    { value: 4 },
    WINDOW,
    null,
  )
  assert.equal(few.verdict, 'cannot_tell')
  assert.match(few.reason, new RegExp(`2 scrape\\(s\\).*${MIN_SLOT_SCRAPES} needed`))

  const rate = slotCheck(
    series([
      [4, 0],
      [4, 0],
      [4, 0],
    ]),
    { value: 2, mode: 'request_rate' },
    WINDOW,
    null,
  )
  assert.equal(rate.verdict, 'cannot_tell')
  assert.match(rate.reason, /request-rate mode/)

  const two = [
    ...series([
      [4, 0],
      [4, 0],
      [4, 0],
    ]),
    scrape(1200, { running: 1 }, 'http://127.0.0.1:10/metrics'),
  ]
  assert.match(slotCheck(two, { value: 4 }, WINDOW, null).reason, /2 metrics URLs/)
})
