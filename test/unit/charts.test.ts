import assert from 'node:assert/strict'
import { test } from 'node:test'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import { renderCharts } from '../../src/report/charts.js'
import { renderHtml } from '../../src/report/html.js'
import { finishResult } from '../../src/result/build-result.js'
import { makeRecord } from '../helpers/records.js'

test('charts are SVG rendered without a browser, one line per series and one point per level', async () => {
  const client = { cpu_percent: 1, loops: [] }
  const levels = [1, 4, 16].map((concurrency) =>
    summarizeLevel(
      concurrency,
      [
        makeRecord({
          level: concurrency,
          sent_at: 0,
          token_times: [30 * concurrency, 30 * concurrency + 10],
          output_tokens: 2,
        }),
      ],
      { percentiles: [50, 95, 99], timeoutMs: 1000, slos: [] },
      client,
    ),
  )
  const meta = {
    percentiles: [50, 95, 99],
    slo: {},
    workload: { input_tokens: 8, output_tokens: 64 },
    partial: false,
    target: { model: 'm<x>', base_url: 'http://h/v1', endpoint: '/v1/chat/completions' },
    load: { levels: [1, 4, 16] },
    client: { architecture: 'test' },
    tool_version: '0',
    started_at: 'now',
  } as never
  const result = finishResult(levels, meta)
  const charts = await renderCharts(result)
  const ttft = charts.find((chart) => chart.name === 'ttft')
  assert.ok(ttft !== undefined)
  assert.equal(ttft.series, 3)
  assert.equal(ttft.points, 9)
  assert.equal((ttft.svg.match(/class="mark-line role-mark/g) ?? []).length, ttft.series)
  // Vega labels every point, and each series' line with its first point's figures: 9 + 3.
  assert.equal((ttft.svg.match(/aria-label="concurrency: \d+; [^"]*series: TTFT p\d+/g) ?? []).length, 9 + 3)
  const html = renderHtml(result, charts)
  assert.ok(!/<script[^>]+src=|<link[^>]+href=/.test(html), 'no external script or stylesheet')
  assert.match(html, /<title>llmbench: m&lt;x&gt;<\/title>/, 'text is escaped')
  assert.match(html, /http:\/\/h\/v1\/chat\/completions/, 'the endpoint is joined, not doubled')
})

test('charts also render to PNG, with their text drawn in the installed font', async () => {
  const { toPng } = await import('../../src/report/render-folder.js')
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><rect width="200" height="40" fill="white"/>' +
    '<text x="10" y="25" font-family="DejaVu Sans" font-size="16">TTFT p95</text></svg>'
  const withFonts = toPng(svg)
  assert.deepEqual([...withFonts.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG')
  assert.equal(withFonts.readUInt32BE(16), 400, 'rendered at 2x: 400 px wide')
  // Without fonts the text is not drawn: the two images differ only if the text really rendered.
  assert.notDeepEqual(
    withFonts,
    toPng(svg, false),
    'text renders with the system font (fonts-dejavu-core in CI)',
  )
})
