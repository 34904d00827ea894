import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'
import { readServerTimeline } from '../../src/report/server-timeline.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

const CHROMIUM = '/usr/bin/chromium'
/** Kept after the run, as a test artifact a person can look at. */
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url))

test('report.html renders every chart in real Chromium, with no console error and no network request', {
  timeout: 120_000,
}, async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`)
  const out = join(tempDir(), 'demo')
  // A few injected 500s, so the report also has failures to show. They may land on the lowest
  // level's few requests, which the success-rate gate rightly fails; this test is about rendering.
  const demo = await runCli([
    'demo',
    '--levels',
    '1,4,16,32',
    '--duration',
    '1',
    '--fault',
    '500:0.1',
    '--min-success-rate',
    '0',
    '--no-preflight',
    '--quiet',
    '--out',
    out,
  ])
  assert.equal(demo.code, 0, demo.stderr)
  const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
  for (const name of ['ttft', 'throughput', 'success-rate', 'tpot-itl', 'ttft-distribution']) {
    const svg = readFileSync(join(out, 'charts', `${name}.svg`), 'utf8')
    assert.match(svg, /^<svg[\s\S]*<\/svg>$/, `${name}.svg is an SVG document`)
    assert.equal(
      readFileSync(join(out, 'charts', `${name}.png`))
        .subarray(1, 4)
        .toString(),
      'PNG',
    )
  }

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } })
    const consoleErrors: string[] = []
    const requests: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(error.message))
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(pathToFileURL(join(out, 'report.html')).href)

    const charts = await page.$$eval('figure[data-chart]', (figures) =>
      figures.map((figure) => ({
        name: figure.getAttribute('data-chart'),
        series: Number(figure.getAttribute('data-series')),
        points: Number(figure.getAttribute('data-points')),
        lines: figure.querySelectorAll('.mark-line.role-mark path').length,
        symbols: figure.querySelectorAll('.mark-symbol.role-mark path').length,
        width: figure.querySelector('svg')?.getBoundingClientRect().width ?? 0,
      })),
    )
    const levels = result.levels.length
    const percentiles = result.meta.percentiles.length
    const expected: Record<string, { series: number; points: number }> = {
      ttft: { series: percentiles, points: percentiles * levels },
      throughput: { series: 1, points: levels },
      'success-rate': { series: 1, points: levels },
      'tpot-itl': { series: percentiles + 1, points: (percentiles + 1) * levels },
      // min, each percentile and max per level, as points (no line).
      'ttft-distribution': { series: percentiles + 2, points: (percentiles + 2) * levels },
    }
    // The simulator serves /metrics (and timings in the demo): client TTFT beside each server-side
    // figure, one point per level where that figure exists.
    const typed = result as BenchResult
    const serverSide = [
      typed.levels.filter((level) => level.server?.ttft_ms_bucketed?.p50 != null).length,
      typed.levels.filter((level) => level.in_band?.server_prefill_ms.p50 != null).length,
      typed.levels.filter((level) => level.in_band?.queue_ms.p50 != null).length,
    ].filter((points) => points > 0)
    // The engine's running and waiting gauges over the run, one point per answered scrape.
    const timeline = readServerTimeline(
      out,
      typed.levels.map((level) => ({ value: level.value, name: String(level.value) })),
    )
    if (timeline !== null && timeline.samples.length > 0)
      expected['server-timeline'] = {
        series: new Set(timeline.samples.map((sample) => sample.series)).size,
        points: timeline.samples.length,
      }
    if (serverSide.length > 0)
      expected['ttft-client-server'] = {
        series: 1 + serverSide.length,
        points: levels + serverSide.reduce((a, b) => a + b, 0),
      }
    assert.deepEqual(charts.map((chart) => chart.name).sort(), Object.keys(expected).sort())
    for (const chart of charts) {
      const want = expected[chart.name as string] as { series: number; points: number }
      assert.equal(
        chart.lines,
        chart.name === 'ttft-distribution' ? 0 : want.series,
        `${chart.name}: one line per series`,
      )
      assert.equal(chart.symbols, want.points, `${chart.name}: one point per level and series`)
      assert.ok(chart.width > 300, `${chart.name} is drawn (${chart.width}px wide)`)
    }
    // Hovering a point shows its figures.
    await page.hover('figure[data-chart="throughput"] .mark-symbol.role-mark path')
    assert.match(
      (await page.textContent('#tip')) ?? '',
      /concurrency: 1;.*series: output tokens\/s; value: [\d.]+/,
    )
    assert.match((await page.textContent('.verdict')) ?? '', /Saturation: /)
    assert.equal(await page.$$eval('table:first-of-type tbody tr', (rows) => rows.length), levels)
    const failed = result.levels.reduce(
      (sum: number, level: { errors: { http_5xx: number } }) => sum + level.errors.http_5xx,
      0,
    )
    assert.ok(failed > 0, 'the injected faults failed some requests')
    assert.match(
      (await page.textContent('body')) ?? '',
      /http_5xx[\s\S]*HTTP 500: Internal server error \(injected fault\)/,
    )

    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true })
    assert.deepEqual(consoleErrors, [])
    assert.deepEqual(
      requests.filter((url) => !url.startsWith('file://')),
      [],
      'no network request',
    )
  } finally {
    await browser.close()
  }
})
