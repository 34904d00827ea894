import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { logTicks, msAxis } from '../../src/report/chart-axes.js'
import { headlineHtml } from '../../src/report/headline.js'
import { requestTimelines } from '../../src/report/request-timeline.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { makeRecord } from '../helpers/records.js'

test('log ticks label every 1-2-5 step from below the fastest figure to above the slowest', () => {
  assert.deepEqual(logTicks([28, 53, 1195]), [20, 50, 100, 200, 500, 1000, 2000])
  assert.deepEqual(logTicks([0.7, 3]), [0.5, 1, 2, 5])
  assert.deepEqual(logTicks([]), [])
  // A queue that was empty (0 ms) cannot sit on a log axis: symlog, with 0 labelled.
  assert.deepEqual(msAxis([0, 12]), {
    scale: { type: 'symlog', constant: 1 },
    axis: { values: [0, 10, 20], labelExpr: msAxis([1]).axis.labelExpr },
  })
  assert.deepEqual(msAxis([3, 12]).scale, { type: 'log' })
})

const level = (value: number, verdict: LevelSummary['verdict']): LevelSummary =>
  ({ value, verdict }) as LevelSummary

function result(
  levels: LevelSummary[],
  saturation: number | null,
  capacity: number | null = null,
): BenchResult {
  return {
    meta: { load: { mode: 'concurrency' } },
    levels,
    saturation:
      saturation === null
        ? null
        : {
            value: saturation,
            mode: 'concurrency',
            reason: 'r',
            cause: { kind: 'batch-slots', evidence: 'running flat at 16', setting: '--max-num-seqs' },
          },
    saturation_summary:
      saturation === null ? 'not saturated up to 4' : `saturation at concurrency ${saturation}`,
    capacity: capacity === null ? null : { value: capacity, mode: 'concurrency', reason: 'x' },
    capacity_summary: capacity === null ? null : `capacity ${capacity} under the SLOs (ttft_p95_ms ≤ 500)`,
  } as unknown as BenchResult
}

test('the headline answers with the capacity, says why, and highlights the patterns the levels show', () => {
  const html = headlineHtml(result([level(1, 'healthy'), level(16, 'healthy'), level(32, 'saturated')], 16))
  assert.match(html, /<p class="answer">Capacity: 16 concurrent streams \(the knee\)<\/p>/)
  assert.match(html, /Why: running flat at 16\. Look at: --max-num-seqs/)
  const matched = [
    ...html.matchAll(
      /<tr class="match" data-verdict="([a-z-]+)"><th>[^<]+<\/th>(?:<td>[^<]*<\/td>){2}<td>([^<]+)<\/td>/g,
    ),
  ]
  assert.deepEqual(
    matched.map((m) => [m[1], m[2]]),
    [
      ['healthy', 'c=1, c=16'],
      ['saturated', 'c=32'],
    ],
  )
  assert.equal(
    (html.match(/data-verdict=/g) ?? []).length,
    4,
    'the four patterns; misconfigured only when a level is',
  )
  // With SLOs, the capacity under them is the answer; the knee follows.
  const slo = headlineHtml(result([level(1, 'healthy'), level(8, 'misconfigured')], 4, 2))
  assert.match(slo, /Capacity: 2 concurrent streams under the SLOs/)
  assert.match(slo, /<tr class="match" data-verdict="misconfigured">/)
  assert.match(headlineHtml(result([level(4, 'healthy')], null)), /No knee found: not saturated up to 4/)
})

test('the request timeline keeps measured requests in send order and samples a busy level evenly', () => {
  const records = [
    ...Array.from({ length: 200 }, (_, i) =>
      makeRecord({
        level: 8,
        seq: i,
        sent_at: 1000 + i * 5,
        token_times: [1000 + i * 5 + 40, 1000 + i * 5 + 90],
      }),
    ),
    makeRecord({ level: 8, phase: 'warmup', sent_at: 0, token_times: [10] }),
    makeRecord({ level: 2, sent_at: 50, error: { class: 'http_5xx', message: 'x' } as never }),
  ]
  const [two, eight] = requestTimelines(result([level(2, 'healthy'), level(8, 'saturated')], 2), records, 80)
  assert.deepEqual(two?.bars, [{ row: 0, sent: 0, first_token: null, end: 0, outcome: 'failed' }])
  assert.equal(two?.knee, true)
  assert.equal(eight?.total, 200, 'the warm-up request is not counted')
  assert.equal(eight?.bars.length, 80)
  // Every 2.5th request, from the first: sends 12.5 ms apart on average, the last near the end.
  assert.deepEqual(eight?.bars[0], { row: 0, sent: 0, first_token: 40, end: 90, outcome: 'ok' })
  assert.equal(eight?.bars[1]?.sent, 10)
  assert.equal(eight?.bars[2]?.sent, 25)
  assert.ok((eight?.bars.at(-1)?.sent ?? 0) >= 985)
})
