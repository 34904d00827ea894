import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  bucketEstimate,
  bucketPercentile,
  counterIncrease,
  histogramIncrease,
} from '../../src/server-metrics/bucket-percentiles.js'
import { serverLevelFigures } from '../../src/server-metrics/level-figures.js'
import type { ScrapeOk, ServerScrape } from '../../src/server-metrics/scrape-file.js'
import type { Buckets, ScrapeValues } from '../../src/server-metrics/vocabulary.js'

const URL_A = 'http://engine:8000/metrics'

function ok(at: number, values: Partial<ScrapeValues>, url = URL_A): ServerScrape {
  return {
    kind: 'scrape',
    url,
    at,
    duration_ms: 5,
    values: { gauges: {}, counters: {}, histograms: {}, sources: {}, ...values },
  }
}

function ttft(counts: [number, number, number], count: number, sum: number): Buckets {
  return {
    buckets: [
      [0.1, counts[0]],
      [0.5, counts[1]],
      [1, counts[2]],
    ],
    count,
    sum,
  }
}

test('counter increase: deltas added, a drop read as a restart counting from zero', () => {
  assert.equal(counterIncrease([10, 15, 15, 22]), 12)
  assert.equal(counterIncrease([100, 120, 5, 9]), 20 + 5 + 4)
  assert.equal(counterIncrease([7]), 0)
})

test('histogram increase and bucket-interpolated percentiles', () => {
  const increase = histogramIncrease([ttft([1, 1, 1], 1, 0.05), ttft([3, 9, 11], 11, 4.05)])
  assert.deepEqual(increase, ttft([2, 8, 10], 10, 4))
  const histogram = increase as Buckets
  // 10 observations: 2 in (0, 0.1], 6 in (0.1, 0.5], 2 in (0.5, 1].
  // p50: rank 5 → 3 of the bucket's 6 → 0.1 + 0.4 * 3/6 = 0.3.
  assert.ok(Math.abs((bucketPercentile(histogram, 50) as number) - 0.3) < 1e-12)
  // p10: rank 1 → half of the first bucket, from 0 → 0.05.
  assert.ok(Math.abs((bucketPercentile(histogram, 10) as number) - 0.05) < 1e-12)
  // p95: rank 9.5 → 1.5 of the last bucket's 2 → 0.5 + 0.5 * 0.75 = 0.875.
  assert.ok(Math.abs((bucketPercentile(histogram, 95) as number) - 0.875) < 1e-12)
  // Observations past the last finite bound (+Inf bucket): the highest finite bound.
  assert.equal(bucketPercentile({ buckets: [[0.1, 1]], count: 4, sum: null }, 99), 0.1)
  assert.equal(bucketPercentile({ buckets: [[0.1, 0]], count: 0, sum: 0 }, 50), null)
  // A restart between scrapes: the new counts count whole.
  assert.deepEqual(
    histogramIncrease([ttft([5, 5, 5], 5, 1), ttft([1, 2, 2], 2, 0.4)]),
    ttft([1, 2, 2], 2, 0.4),
  )
})

test('a level: gauges over the window, counters over the window, histograms from the scrape before to the one after', () => {
  const scrapes: ServerScrape[] = [
    ok(500, { gauges: { running: 0, kv_cache_usage: 0.1 }, counters: { generation_tokens: 100 } }),
    ok(1500, {
      gauges: { running: 4, kv_cache_usage: 0.5 },
      counters: { generation_tokens: 180, prefix_cache_queries: 0, prefix_cache_hits: 0 },
    }),
    { kind: 'gap', url: URL_A, at: 2500, duration_ms: 5000, error: 'no answer within 5000 ms' },
    ok(3500, { gauges: { running: 2, kv_cache_usage: 0.9 }, counters: { generation_tokens: 300 } }),
    ok(4500, { gauges: { running: 0, kv_cache_usage: 0.2 }, counters: { generation_tokens: 310 } }),
    // A later level: not in this one.
    ok(9000, { gauges: { running: 16 }, counters: { generation_tokens: 900 } }),
  ]
  const figures = serverLevelFigures(scrapes, { start: 1000, end: 4000 }, [50, 95], 250)
  assert.ok(figures !== null)
  assert.equal(figures.scrapes, 2)
  assert.equal(figures.gaps, 1)
  assert.deepEqual(figures.running, { mean: 3, max: 4 })
  assert.deepEqual(figures.kv_cache_usage, { mean: 0.7, max: 0.9 })
  // Over the window [1000, 4000] only: 120 between the scrapes inside it (read at 1502.5 and 3502.5),
  // 60 per second; the 0.5025 s before the first at that rate (30.15, under the 80 counted since the
  // scrape before), the 0.4975 s after the last capped at the 10 the server counted up to the next.
  assert.equal(figures.generation_tokens, 120 + 30.15 + 10)
  assert.equal(figures.span_s, 4, 'the histograms still span the scrapes around the window')
  assert.equal(figures.cache_hit_rate, null, 'the hit counters are not in every scrape')
  assert.equal(figures.ttft_ms_bucketed, null)
  assert.equal(figures.outside_scheduler_ms, null, 'no server TTFT')
  assert.equal(figures.client_ttft_p50_ms, 250)
})

test("server TTFT percentiles beside the client's, the difference, and hits over queries", () => {
  const scrapes: ServerScrape[] = [
    ok(0, {
      counters: { prefix_cache_queries: 1000, prefix_cache_hits: 100 },
      histograms: { server_ttft: ttft([0, 0, 0], 0, 0), server_queue_time: ttft([0, 0, 0], 0, 0) },
    }),
    ok(2000, {
      counters: { prefix_cache_queries: 3000, prefix_cache_hits: 1600 },
      histograms: { server_ttft: ttft([2, 8, 10], 10, 4), server_queue_time: ttft([10, 10, 10], 10, 0.2) },
    }),
  ]
  const figures = serverLevelFigures(scrapes, { start: 100, end: 1900 }, [50, 95], 1300)
  assert.ok(figures !== null)
  assert.equal(figures.cache_hit_rate, 0.75, '1500 hits of 2000 queried tokens')
  // p50 300 in (100, 500]: a bucket wider than the estimate, so its range is kept beside it.
  assert.deepEqual(figures.ttft_ms_bucketed, {
    count: 10,
    mean: 400,
    p50: 300,
    p95: 875,
    ranges: { p50: { low: 100, high: 500 } },
  })
  // All ten in (0, 100 ms] with a mean of 20 ms: the median is at most 20 / (1 − 0.5) = 40 ms (the
  // interpolation alone said 50), p95 at most 400 ms (95 stands).
  assert.deepEqual(figures.queue_time_ms_bucketed, {
    count: 10,
    mean: 20,
    p50: 40,
    p95: 95,
    ranges: { p50: { low: 0, high: 40 }, p95: { low: 0, high: 100 } },
  })
  assert.equal(figures.outside_scheduler_ms, 1000, 'client 1300 ms - server 300 ms')
  assert.equal(figures.scrapes, 0, 'no scrape inside the window, only around it')
})

test('no scrape in or around the window: null; two URLs are added up, fractions averaged', () => {
  assert.equal(serverLevelFigures([], { start: 0, end: 10 }, [50], null), null)
  const gpu = 'http://gpu:9400/metrics'
  const scrapes: ServerScrape[] = [
    ok(10, { gauges: { running: 2, kv_cache_usage: 0.2 } }),
    ok(20, { gauges: { running: 6, kv_cache_usage: 0.6 } }, 'http://replica-2:8000/metrics'),
    ok(
      15,
      { gauges: { gpu_power_watts: 300, gpu_utilization: 0.5 }, counters: { gpu_energy_joules: 0 } },
      gpu,
    ),
    ok(
      25,
      { gauges: { gpu_power_watts: 310, gpu_utilization: 0.7 }, counters: { gpu_energy_joules: 3 } },
      gpu,
    ),
  ]
  const figures = serverLevelFigures(scrapes, { start: 0, end: 30 }, [50], null)
  assert.deepEqual(figures?.running, { mean: 8, max: 8 })
  assert.deepEqual(figures?.kv_cache_usage, { mean: 0.4, max: 0.6 })
  assert.deepEqual(figures?.gpu_power_watts, { mean: 305, max: 310 })
  assert.deepEqual(figures?.gpu_utilization, { mean: 0.6, max: 0.7 })
  assert.equal(figures?.gpu_energy_joules, 3)
})

test('bucketed percentiles never above what the exact mean allows; wide buckets give a range', () => {
  // The simulator's queue time (a recorded scrape of test/fixtures/rendered/conc): 8 requests in the
  // first bucket (0, 300 ms], their mean 0.0216 ms. Interpolation alone says p50 150 ms.
  const queue: Buckets = {
    buckets: [
      [0.3, 8],
      [0.5, 8],
      [1, 8],
    ],
    count: 8,
    sum: 0.000172927,
  }
  assert.ok(Math.abs((bucketPercentile(queue, 50) as number) - 0.15) < 1e-12, 'the interpolation')
  const p50 = bucketEstimate(queue, 50)
  assert.ok(p50 !== null)
  const mean = 0.000172927 / 8
  assert.ok(Math.abs(p50.value - mean / 0.5) < 1e-15, 'at most mean / (1 − 0.5)')
  assert.deepEqual({ low: p50.low, high: p50.high }, { low: 0, high: p50.value })
  // p99 of a histogram whose rank is past the last finite bound: above 1 s, at most mean / 0.01.
  const tail: Buckets = { buckets: [[1, 90]], count: 100, sum: 150 }
  assert.deepEqual(bucketEstimate(tail, 99), { value: 1, low: 1, high: 150 })
  assert.deepEqual(bucketEstimate({ ...tail, sum: null }, 99), { value: 1, low: 1, high: null })
  // A narrow bucket: the interpolation is below the bound and no range is kept.
  const narrow = serverLevelFigures(
    [
      ok(0, { histograms: { server_ttft: ttft([0, 0, 0], 0, 0) } }),
      ok(1000, { histograms: { server_ttft: ttft([0, 0, 10], 10, 8) } }),
    ],
    { start: 100, end: 900 },
    [50],
    null,
  )
  assert.deepEqual(narrow?.ttft_ms_bucketed, { count: 10, mean: 800, p50: 750 })
})

test('counters over the measured window only: a warm-up burst before it and a cool-down after it are not counted', () => {
  // 500 tokens of warm-up between 100 and 500 ms, then the measured window [500, 4500] at 100 tokens
  // a second (400 tokens), then 300 of cool-down after it; scrapes every second, read at once.
  const at = (t: number, tokens: number): ServerScrape => ({
    ...(ok(t, { counters: { generation_tokens: tokens } }) as ScrapeOk),
    duration_ms: 0,
  })
  const scrapes = [at(0, 0), at(1000, 550), at(2000, 650), at(3000, 750), at(4000, 850), at(5000, 1200)]
  const window = { start: 500, end: 4500 }
  const figures = serverLevelFigures(scrapes, window, [50], null)
  // The scrapes around the window would say 1200; the four inside say 300 over 3 s, and each half
  // second at the edges is counted at that rate.
  assert.equal(figures?.generation_tokens, 400)
  // Two scrapes in a long window of a slow scrape (one inside): read at the edges by interpolation.
  const sparse = [at(0, 0), at(2000, 200), at(6000, 600)]
  assert.equal(serverLevelFigures(sparse, { start: 1000, end: 5000 }, [50], null)?.generation_tokens, 400)
  // No scrape after the window (the run's last one lost): the last scrape stands for its end.
  assert.equal(serverLevelFigures(scrapes.slice(0, 5), window, [50], null)?.generation_tokens, 350)
})

test("gauges over the level's steady window when every URL answered there: the first wave and the drain left out", () => {
  // A 4-slot server at 6 streams: arriving (2 running), steady (4 running, 2 waiting), draining (2 running).
  const scrapes: ServerScrape[] = [
    ok(1100, { gauges: { running: 2, waiting: 0 } }),
    ok(1600, { gauges: { running: 4, waiting: 2 } }),
    ok(2100, { gauges: { running: 4, waiting: 2 } }),
    ok(2900, { gauges: { running: 2, waiting: 0 } }),
  ]
  const window = { start: 1000, end: 3000 }
  const steady = serverLevelFigures(scrapes, window, [50], null, { start: 1300, end: 2600 })
  assert.equal(steady?.gauges_over, 'steady')
  assert.deepEqual(steady?.running, { mean: 4, max: 4 })
  assert.deepEqual(steady?.waiting, { mean: 2, max: 2 })
  assert.equal(steady?.scrapes, 4, 'scrapes still counts the whole window')
  const whole = serverLevelFigures(scrapes, window, [50], null)
  assert.equal(whole?.gauges_over, 'measured')
  assert.deepEqual(whole?.running, { mean: 3, max: 4 })
  // No scrape inside the steady part (a short level): the whole window, said so.
  const missed = serverLevelFigures(scrapes, window, [50], null, { start: 1700, end: 2000 })
  assert.equal(missed?.gauges_over, 'measured')
  assert.deepEqual(missed?.waiting, { mean: 1, max: 2 })
})

test('a steady window rounded past the measured one: the scrape the level ends with is not read as its only steady gauge', () => {
  // The steady window's end is the last response's end, rounded to the millisecond: it can lie a
  // fraction past the window, where the scrape taken as the level ends may fall.
  const scrapes: ServerScrape[] = [
    ok(2000, { gauges: { running: 4, waiting: 2 } }),
    ok(3000.3, { gauges: { running: 0, waiting: 0 } }),
  ]
  const figures = serverLevelFigures(scrapes, { start: 1000, end: 3000 }, [50], null, {
    start: 2500,
    end: 3000.4,
  })
  assert.equal(figures?.gauges_over, 'measured')
  assert.deepEqual(figures?.running, { mean: 4, max: 4 })
})
