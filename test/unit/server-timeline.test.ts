import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RequestRecord } from '../../src/records/types.js'
import { serverTimeline } from '../../src/report/server-timeline.js'
import type { ServerScrape } from '../../src/server-metrics/scrape-file.js'

function scrape(url: string, at: number, running: number, waiting: number): ServerScrape {
  return {
    kind: 'scrape',
    url,
    at,
    duration_ms: 5,
    values: { gauges: { running, waiting }, counters: {}, histograms: {}, sources: {} },
  } as ServerScrape
}

test("the server's timeline: one URL's gauges against seconds, and where each level's measured window began", () => {
  const scrapes = [
    { kind: 'gap', url: 'http://a/metrics', at: 500, duration_ms: 5000, error: 'timeout' } as ServerScrape,
    scrape('http://a/metrics', 1000, 1, 0),
    scrape('http://b/metrics', 1100, 9, 9),
    scrape('http://a/metrics', 2000, 4, 2),
  ]
  const records = [
    { phase: 'warmup', level: 4, sent_at: 1200, end_at: 1300 },
    { phase: 'measure', level: 4, sent_at: 1500, end_at: 2500 },
  ] as RequestRecord[]
  const timeline = serverTimeline(scrapes, records, [{ value: 4, name: 'c=4' }])
  assert.deepEqual(timeline?.samples, [
    { seconds: 0, series: 'running', value: 1 },
    { seconds: 0, series: 'waiting', value: 0 },
    { seconds: 1, series: 'running', value: 4 },
    { seconds: 1, series: 'waiting', value: 2 },
  ])
  assert.deepEqual(timeline?.levels, [{ seconds: 0.5, label: 'c=4' }])
  assert.equal(serverTimeline([], records, []), null, 'no scrapes, no timeline')
})
