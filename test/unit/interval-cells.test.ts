import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { intervalRows, intervalText, tailIntervalText } from '../../src/report/interval-cells.js'
import { renderMarkdown } from '../../src/report/markdown.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { storedResultSchema } from '../../src/result/result-schema.js'

const STORED = new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url)
const stored = (): BenchResult => JSON.parse(readFileSync(STORED, 'utf8')) as BenchResult

test('an interval is written with its open ends as such, never a made-up number', () => {
  assert.equal(intervalText({ low: 0.9, high: 2.8 }, 1), '0.9–2.8')
  assert.equal(intervalText({ low: 900, high: null }, 0), '900–?')
  assert.equal(tailIntervalText({ low: 900, high: null }, 0), '(≥900)')
  assert.equal(tailIntervalText({ low: null, high: 31 }, 0), '(≤31)')
  assert.equal(tailIntervalText({ low: null, high: null }, 0), '(?)')
  assert.equal(tailIntervalText({ low: 25, high: 31 }, 0), '(25–31)')
})

test('every figure of every level has a row with its method and effective n', () => {
  const result = stored()
  const rows = intervalRows(result)
  // 4 levels x (4 latencies x (3 percentiles + mean) + 2 throughputs).
  assert.equal(rows.length, 4 * (4 * 4 + 2))
  const ttft = rows.find((row) => row.level === 'c=8' && row.figure === 'TTFT ms p99')
  assert.deepEqual(ttft, {
    level: 'c=8',
    figure: 'TTFT ms p99',
    value: '420',
    interval: '420–?',
    effectiveN: '16',
    method: 'order-statistic',
  })
  assert.ok(rows.some((row) => row.figure === 'ITL ms mean' && row.method === 't'))
  assert.ok(rows.some((row) => row.figure === 'output tok/s' && row.method === 'slices-t'))
})

test("a result of issue 25's build (intervals without methods, means, ITL or effective n) loads and renders; a malformed one does not load", () => {
  const older = stored() as unknown as { levels: Record<string, Record<string, unknown>>[] }
  for (const level of older.levels) {
    const intervals = level.intervals as Record<string, unknown>
    for (const key of ['methods', 'itl_ms', 'effective_n']) delete intervals[key]
    for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms'])
      delete (intervals[key] as Record<string, unknown>).mean
  }
  const schema = storedResultSchema('llmbench.result/2')
  assert.equal(schema.safeParse(older).success, true)
  const markdown = renderMarkdown(older as unknown as BenchResult)
  assert.match(markdown, /\| c=1 \| TTFT ms p95 \| 26 \| 25–\? \| {2}\| order-statistic \|/)
  assert.doesNotMatch(markdown, /\| c=\d \| ITL ms/)
  const broken = stored() as unknown as { levels: { intervals: { ttft_ms: { p50: { low: unknown } } } }[] }
  ;(broken.levels[0] as (typeof broken.levels)[number]).intervals.ttft_ms.p50.low = 'fast'
  assert.equal(schema.safeParse(broken).success, false)
})
