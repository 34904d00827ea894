import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIN_SLOT_SCRAPES, slotCheck } from '../../src/server-metrics/cancel-slots.js'
import type { ServerScrape } from '../../src/server-metrics/scrape-file.js'

const URL_A = 'http://127.0.0.1:9/metrics'
const WINDOW = { start: 0, end: 10_000 }
/** No generated-tokens counter: the running count alone decides. */
const NO_COUNTER = { generated: null, received: 1000, forgone: 800 }

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
    NO_COUNTER,
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
    NO_COUNTER,
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
  const check = slotCheck(scrapes, { value: 4 }, WINDOW, steady, NO_COUNTER)
  assert.equal(check.scrapes, 4)
  assert.equal(check.verdict, 'not_freed')
  // Without it, the ramp's scrapes pull the median down to the streams.
  assert.equal(slotCheck(scrapes, { value: 4 }, WINDOW, null, NO_COUNTER).scrapes, 7)
})

test('what cannot be told says why', () => {
  const noCount = slotCheck([scrape(1000, { waiting: 0 })], { value: 4 }, WINDOW, null, NO_COUNTER)
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
    NO_COUNTER,
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
    NO_COUNTER,
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
  assert.match(slotCheck(two, { value: 4 }, WINDOW, null, NO_COUNTER).reason, /2 metrics URLs/)
})

test('the generated-tokens counter: tokens the cancels spared, generated for no one, convict the server', () => {
  const counts = series([
    [4, 0],
    [4, 0],
    [4, 0],
  ])
  // llama.cpp with its slots all taken: the count cannot rise above the streams, the counter can.
  const leaked = slotCheck(counts, { value: 4 }, WINDOW, null, {
    generated: 1700,
    received: 1000,
    forgone: 800,
  })
  assert.equal(leaked.verdict, 'not_freed')
  assert.equal(leaked.unread_tokens, 700)
  assert.match(
    leaked.reason,
    /^the server generated 1700 tokens .* \(\+700, 88% of the 800 the cancels spared\): it decoded on/,
  )
  assert.match(leaked.reason, /; the server held 4 request/, 'the count, which cleared it, is said after')

  const stopped = slotCheck(counts, { value: 4 }, WINDOW, null, {
    generated: 960,
    received: 1000,
    forgone: 800,
  })
  assert.equal(stopped.verdict, 'freed')
  assert.equal(stopped.unread_tokens, -40)

  // It reads in request-rate mode too, where the count cannot.
  const rate = slotCheck(counts, { value: 2, mode: 'request_rate' }, WINDOW, null, {
    generated: 1010,
    received: 1000,
    forgone: 800,
  })
  assert.equal(rate.verdict, 'freed')
  assert.match(rate.reason, /it stopped generating for them; request-rate mode/)

  // Spared tokens lost in the counter's edges: no reading from it.
  const few = slotCheck([], { value: 4 }, WINDOW, null, { generated: 1030, received: 1000, forgone: 20 })
  assert.equal(few.verdict, 'cannot_tell')
  assert.match(few.reason, /spared too few tokens \(20\)/)
})
