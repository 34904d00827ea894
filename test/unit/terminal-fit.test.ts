import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import type { RequestRecord } from '../../src/records/types.js'
import { columnWidth, fitColumns } from '../../src/report/fit-columns.js'
import { samplesNeeded, tooFewSamples } from '../../src/report/small-samples.js'
import { renderTable, renderVerdict } from '../../src/report/terminal.js'
import { finishResult, summaryOptions } from '../../src/result/build-result.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

const META = {
  percentiles: [50, 95, 99],
  slo: {},
  workload: { output_tokens: 64 },
  load: { mode: 'concurrency' },
  client: { timeout_s: 120 },
  partial: false,
} as unknown as RunMeta

function level(value: number, count: number, errors = 0): Omit<LevelSummary, 'verdict' | 'advice'> {
  const records: RequestRecord[] = []
  for (let k = 0; k < count; k++) {
    const failed = k < errors
    records.push(
      makeRecord({
        seq: k,
        level: value,
        sent_at: k * 10,
        token_times: failed ? [] : [k * 10 + 30 + k, k * 10 + 40 + k, k * 10 + 50 + k],
        output_tokens: failed ? 0 : 3,
        end_at: k * 10 + 60 + k,
        ...(failed
          ? {
              status: 503,
              error: { class: 'http_5xx', message: 'HTTP 503: the engine is busy' } as RequestRecord['error'],
            }
          : {}),
      }),
    )
  }
  return summarizeLevel(value, records, { ...summaryOptions(META), slos: [] }, { cpu_percent: 1, loops: [] })
}

/** Widest line of a rendered table. */
const widest = (text: string): number => Math.max(...text.split('\n').map((line) => [...line].length))

test('the table fits 80, 100 and 120 columns: the telling columns first, the rest named for --wide', () => {
  const result = finishResult([level(1, 120), level(8, 120), level(64, 120)], META)
  const full = renderTable(result)
  assert.ok(widest(full) > 100, `the full table is ${widest(full)} wide`)
  assert.doesNotMatch(full, /--wide for/)
  for (const width of [80, 100, 120]) {
    const text = renderTable(result, { width })
    const table = text.split('\n').filter((line) => /^[┌│└]/.test(line))
    assert.ok(widest(table.join('\n')) <= width, `${width}: ${widest(table.join('\n'))}\n${text}`)
    // The verdict and the headline figures are never the ones left out while they fit.
    for (const head of ['conc.', 'req', 'success', 'TTFT ms', 'verdict'])
      assert.ok(text.includes(head), `${width}: ${head}\n${text}`)
    const left = /^--wide for: (.*)$/m.exec(text)?.[1]?.split(', ') ?? []
    if (widest(full) > width) assert.ok(left.length > 0, text)
    for (const name of left) assert.ok(full.includes(name.split(' ')[0] as string), name)
  }
  const narrow = renderTable(result, { width: 80 })
  const wide = renderTable(result, { width: 120 })
  const count = (text: string) => (/^--wide for: (.*)$/m.exec(text)?.[1]?.split(', ') ?? []).length
  assert.ok(count(narrow) > count(wide), 'a narrower terminal leaves more out')
})

test('fitColumns: priority decides, the table order stays, the first column always shows', () => {
  const column = (name: string, priority: number, width: number) => ({
    name,
    priority,
    texts: ['x'.repeat(width)],
  })
  const columns = [column('a', 0, 10), column('b', 5, 10), column('c', 1, 10), column('d', 2, 30)]
  assert.equal(columnWidth(columns[0] as never), 13)
  assert.deepEqual(fitColumns(columns, 1 + 13 * 3 + 33), { shown: [0, 1, 2, 3], omitted: [] })
  assert.deepEqual(fitColumns(columns, 1 + 13 * 2), { shown: [0, 2], omitted: ['b', 'd'] })
  // d (priority 2) does not fit: b (priority 5) is not shown in its place, though it would fit.
  assert.deepEqual(fitColumns(columns, 1 + 13 * 3 + 5), { shown: [0, 2], omitted: ['b', 'd'] })
  assert.deepEqual(fitColumns(columns, 5).shown, [0])
})

test('small samples: p99 from fewer than 100 and p95 from fewer than 20 show their interval (marked in older results), with a legend', () => {
  assert.equal(samplesNeeded(99), 100)
  assert.equal(samplesNeeded(95), 20)
  assert.equal(samplesNeeded(99.9), 1000)
  assert.equal(tooFewSamples({ count: 99 }, 'p99'), true)
  assert.equal(tooFewSamples({ count: 100 }, 'p99'), false)
  assert.equal(tooFewSamples({ count: 19 }, 'p95'), true)
  assert.equal(tooFewSamples({ count: 6 }, 'p50'), false)
  const small = renderTable(finishResult([level(1, 6)], META))
  // Six samples bound neither tail from above: the interval says so rather than a bare number.
  assert.match(small, /\d+ \(≥\d+\) \/ \d+ \(≥\d+\)/, small)
  assert.doesNotMatch(small, /\*/, small)
  assert.match(
    small,
    /^\(low–high\) 95% interval of a percentile from too few samples \(p95 ≥20, p99 ≥100\); ≥low/m,
  )
  // A result of a version without intervals keeps the mark.
  const older = finishResult([level(1, 6)], META)
  for (const each of older.levels) delete each.intervals
  const marked = renderTable(older)
  assert.match(marked, /\d+\* \/ \d+\*/, marked)
  assert.match(marked, /^\* too few samples for that percentile \(p95 ≥20, p99 ≥100\)/m)
  const big = renderTable(finishResult([level(1, 120)], META))
  assert.doesNotMatch(big, /\*|\(≥\d+\)/)
})

test("a narrow terminal keeps the marks where the tails' intervals would crowd out a column; --wide shows the intervals", () => {
  const result = finishResult([level(1, 6), level(8, 6), level(64, 6)], META)
  const wide = renderTable(result)
  assert.match(wide, /\(≥\d+\)/, wide)
  assert.doesNotMatch(wide, /\d\*/, wide)
  // 100 columns hold the verdict beside the intervals; 90 only beside the marks.
  assert.match(renderTable(result, { width: 100 }), /verdict[\s\S]*\(≥\d+\)/)
  const narrow = renderTable(result, { width: 90 })
  assert.ok([...(narrow.split('\n')[0] as string)].length <= 90, narrow)
  assert.match(narrow, /verdict/, narrow)
  assert.match(narrow, /\d\* \/ \d+\*/, narrow)
  assert.match(narrow, /^\* too few samples .*\(--wide shows their 95% intervals\)$/m, narrow)
})

test('notes after the table: the same failure and note at several levels are said once', () => {
  const result = finishResult([level(1, 40, 5), level(2, 40, 5), level(4, 40, 5)], META)
  const text = renderVerdict(result)
  assert.equal(text.split('HTTP 503: the engine is busy').length - 1, 1, text)
  assert.match(text, /15× HTTP 503: the engine is busy \(c=1: 5, c=2: 5, c=4: 5\)/)
  assert.match(text, /failed: c=1 5 \(http_5xx 5\); c=2 5 \(http_5xx 5\); c=4 5 \(http_5xx 5\)/)
  // No text is repeated line for line.
  const lines = text.split('\n')
  assert.equal(new Set(lines).size, lines.length, text)
})
