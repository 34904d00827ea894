// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type Browser, chromium } from 'playwright-core'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { MAX_TIMELINE_BARS } from '../../src/report/request-timeline.js'
import { readServerTimeline } from '../../src/report/server-timeline.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

const CHROMIUM = '/usr/bin/chromium'
const BROWSER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
]
/** Kept after the run, as a test artifact a person can look at. */
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url))

/** A demo run over a gradient with a knee (the simulator's 16 batch slots), into a fresh folder. */
async function demoRun(name: string, extra: string[]): Promise<string> {
  const out = join(tempDir(), name)
  const demo = await runCli(
    [
      'demo',
      '--levels',
      '1,4,16,32',
      '--duration',
      '1',
      '--min-success-rate',
      '0',
      '--no-preflight',
      '--quiet',
      '--out',
      out,
      ...extra,
    ],
    { charts: true },
  )
  assert.equal(demo.code, 0, demo.stderr)
  return out
}

/**
 * The two runs the tests read, made once and side by side from the start of the file (the pair costs
 * one run's time): the run with injected failures, whose report.html the report test reads and which
 * the compare test uses as the base (its patterns differ from the clean run's), and the clean run the
 * compare test holds against it. A demo run is seconds of CPU. A failed run fails the test that reads
 * it (and is not left as an unhandled rejection when that test is filtered out).
 */
let demoRuns: { failing: Promise<string>; clean: Promise<string>; jobs: Promise<string> } | undefined
function startDemoRuns(): NonNullable<typeof demoRuns> {
  if (demoRuns === undefined) {
    demoRuns = {
      failing: demoRun('demo', ['--fault', '500:0.1']),
      clean: demoRun('new', []),
      // Agentic jobs with a fan-out of 2 (plan, two sub-agents, their join), short replies so each
      // level completes jobs within its seconds; the later --levels and --duration win.
      jobs: demoRun('jobs', [
        ...['--levels', '1,4', '--duration', '3', '--output-tokens', '16'],
        ...['--jobs', '--turns', '3', '--fan-out', '2', '--tool-wait', '0.05'],
      ]),
    }
    for (const run of Object.values(demoRuns)) run.catch(() => {})
  }
  return demoRuns
}
const runWithFailures = (): Promise<string> => startDemoRuns().failing

/** One Chromium for the file: each test opens its own page (a fresh context) in it. */
let browser: Browser | undefined
before(async () => {
  startDemoRuns()
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS })
})
after(async () => {
  await browser?.close()
})
function chromiumPage(): ReturnType<Browser['newPage']> {
  assert.ok(browser !== undefined, 'Chromium was launched before the tests')
  return browser.newPage({ viewport: { width: 1280, height: 1400 } })
}

test('report.html renders every chart in real Chromium, with no console error and no network request', {
  timeout: 120_000,
}, async () => {
  const out = await runWithFailures()
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

  const page = await chromiumPage()
  try {
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
      readRecords(join(out, RECORDS_FILE)).records,
      typed.levels.map((level) => ({ value: level.value, name: String(level.value) })),
      typed.meta.run_id,
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
    // The headline: the capacity, the knee's cause, the levels' patterns highlighted.
    const knee = typed.saturation?.value
    assert.ok(
      knee !== undefined,
      `the simulator's 16 batch slots give the demo a knee: ${typed.saturation_summary}`,
    )
    // The stored answer, in the words the terminal and summary.md open with (an uncertain knee says so).
    const answer = (await page.textContent('.headline .answer'))?.trim()
    assert.equal(answer, typed.answer?.text)
    assert.match(
      answer ?? '',
      typed.capacity === null
        ? new RegExp(
            `^Capacity: ${knee} concurrent streams \\(the knee(, uncertain: between \\d+ and \\d+)?\\)$`,
          )
        : new RegExp(`^Capacity: ${typed.capacity.value} concurrent streams under the SLOs$`),
    )
    assert.match((await page.textContent('.headline')) ?? '', /Why: .+\. (Look at|For an answer): /)
    assert.deepEqual(
      await page.$$eval('.patterns tr.match', (rows) => rows.map((row) => row.getAttribute('data-verdict'))),
      ['healthy', 'saturated', 'overloaded', 'client-bound', 'misconfigured'].filter((verdict) =>
        typed.levels.some((level) => level.verdict === verdict),
      ),
    )
    // The knee on every chart: a rule at the knee level (the server timeline: where the knee's level began).
    const knees = await page.$$eval('figure[data-chart]', (figures) =>
      figures.map((figure) => ({
        name: figure.getAttribute('data-chart'),
        rules: figure.querySelectorAll('.knee_marks line').length,
        label: figure.querySelector('.knee_marks line')?.getAttribute('aria-label') ?? '',
      })),
    )
    for (const chart of knees) {
      assert.equal(chart.rules, 1, `${chart.name}: one knee rule`)
      assert.match(chart.label, new RegExp(`knee .*${knee}`), `${chart.name}: the rule is at the knee`)
    }
    // Labelled ticks below 500 ms on both TTFT axes (the distribution's symlog axis had none), and
    // the success rate from 0 to 100.
    const yLabels = (name: string) =>
      page.$$eval(`figure[data-chart="${name}"] .role-axis-label`, (axes) =>
        // Vega draws the x axis' labels first, then the y axis'.
        [...(axes.at(-1)?.querySelectorAll('text') ?? [])].map((text) => text.textContent ?? ''),
      )
    // The lowest value each chart plots: the TTFT chart its percentiles per level, the distribution
    // every request (its fastest). Held against the fastest request, the percentile chart failed
    // whenever a level's p50 sat above the 1-2-5 tick over the fastest request (50 ms over 30.8 ms).
    const plotted = (key: string) =>
      typed.levels.map(
        (level) => (level.ttft_ms as unknown as Record<string, number | null>)[key] ?? Infinity,
      )
    const lowest: Record<string, number> = {
      ttft: Math.min(...typed.meta.percentiles.flatMap((p) => plotted(`p${p}`))),
      'ttft-distribution': Math.min(...plotted('min')),
    }
    for (const name of ['ttft', 'ttft-distribution']) {
      const fastest = lowest[name] as number
      const labels = await yLabels(name)
      const ms = labels.map((label) =>
        label.endsWith(' s') ? Number.parseFloat(label) * 1000 : Number.parseFloat(label),
      )
      assert.ok(ms.every(Number.isFinite), `${name}: labels in ms or s: ${labels.join(', ')}`)
      assert.ok(
        ms.some((value) => value < 500),
        `${name}: a labelled tick below 500 ms: ${labels.join(', ')}`,
      )
      assert.ok(
        ms.some((value) => value <= fastest),
        `${name}: a tick at or below its lowest TTFT, ${fastest} ms: ${labels.join(', ')}`,
      )
    }
    const success = await yLabels('success-rate')
    assert.equal(success[0], '0')
    assert.equal(success.at(-1), '100')
    // Per level, each measured request a bar (sampled evenly past the cap), its first token marked.
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { level: number; phase: string; first_token_at: number | null })
      .filter((record) => record.phase === 'measure')
    const timelines = await page.$$eval('figure[data-timeline]', (figures) =>
      figures.map((figure) => ({
        level: Number(figure.getAttribute('data-timeline')),
        bars: figure.querySelectorAll('.request_marks line').length,
        firstTokens: figure.querySelectorAll('.first_token_marks path').length,
        title: figure.querySelector('.role-title text')?.textContent ?? '',
      })),
    )
    assert.deepEqual(
      timelines.map((timeline) => timeline.level),
      typed.levels.map((level) => level.value).sort((a, b) => a - b),
    )
    for (const timeline of timelines) {
      const measured = records.filter((record) => record.level === timeline.level)
      assert.equal(
        timeline.bars,
        Math.min(measured.length, MAX_TIMELINE_BARS),
        `c=${timeline.level}: one bar per request`,
      )
      assert.ok(
        timeline.firstTokens > 0 && timeline.firstTokens <= timeline.bars,
        `c=${timeline.level}: first tokens marked`,
      )
      if (measured.length > MAX_TIMELINE_BARS) assert.match(timeline.title, /sampled evenly/)
    }
    assert.equal(await page.$$eval('table.levels tbody tr', (rows) => rows.length), levels)
    assert.equal(await page.locator('figure[data-job-timeline]').count(), 0, 'no job Gantt without jobs')
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
    await page.close()
  }
})

test('report.html of a job run: a slow and a typical job turn by turn, branches on their own rows', {
  timeout: 120_000,
}, async () => {
  const out = await startDemoRuns().jobs
  const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
  const turns = readFileSync(join(out, RECORDS_FILE), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { job?: string; turn?: number; level: number; phase: string })
    .filter((record) => record.phase === 'measure' && record.job !== undefined)
  const page = await chromiumPage()
  try {
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(pathToFileURL(join(out, 'report.html')).href)
    const gantts = await page.$$eval('figure[data-job-timeline]', (figures) =>
      figures.map((figure) => ({
        rank: figure.getAttribute('data-job-timeline'),
        level: Number(figure.getAttribute('data-level')),
        job: figure.getAttribute('data-job') ?? '',
        jct: Number(figure.getAttribute('data-jct-ms')),
        turns: Number(figure.getAttribute('data-turns')),
        rows: Number(figure.getAttribute('data-rows')),
        bars: figure.querySelectorAll('.turn_marks path').length,
        waits: figure.querySelectorAll('.turn_wait_marks path').length,
        branches: [...figure.querySelectorAll('.role-axis-label text')].filter((text) =>
          /^branch \d+$/.test(text.textContent ?? ''),
        ).length,
        width: figure.querySelector('svg')?.getBoundingClientRect().width ?? 0,
      })),
    )
    assert.deepEqual(
      gantts.map((gantt) => gantt.rank),
      ['p90', 'p50'],
    )
    // No knee on a 1-to-4 gradient against 16 slots: the highest level is drawn.
    const drawn = result.saturation?.value ?? Math.max(...result.levels.map((level) => level.value))
    for (const gantt of gantts) {
      assert.equal(gantt.level, drawn)
      // One bar per turn of the job (3 steps with a fan-out of 2: 4 turns), as its records say.
      const own = new Set(turns.filter((record) => record.job === gantt.job).map((record) => record.turn))
      assert.equal(own.size, 4, `${gantt.rank}: job ${gantt.job} has its 4 turns in the records`)
      assert.equal(gantt.bars, own.size, `${gantt.rank}: a bar per turn`)
      assert.equal(gantt.turns, own.size)
      assert.ok(gantt.waits > 0 && gantt.waits <= gantt.bars, `${gantt.rank}: first-token waits drawn`)
      // The fan-out's second sub-agent on its own row.
      assert.equal(gantt.rows, 2)
      assert.equal(gantt.branches, 2, `${gantt.rank}: a labelled row per branch`)
      assert.ok(gantt.width > 300, `${gantt.rank} is drawn (${gantt.width}px wide)`)
    }
    const [slow, typical] = gantts
    assert.ok((slow?.jct ?? 0) >= (typical?.jct ?? Infinity), 'the slow job took at least the typical one')
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'report-jobs.png'), fullPage: true })
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
  }
})

test("compare --html: both runs' capacity, knees and patterns, shared charts and the table, in real Chromium", {
  timeout: 120_000,
}, async () => {
  // The base with injected failures, the new one without: the pages' patterns differ.
  const base = await runWithFailures()
  const next = await startDemoRuns().clean
  const page = join(tempDir(), 'compare.html')
  const compare = await runCli(['compare', base, next, '--html', page])
  // 5 (inconclusive) where a busy host bound either run's client: the page is written all the same.
  assert.ok([0, 1, 5].includes(compare.code ?? -1), `exit ${compare.code}: ${compare.stderr}`)
  assert.ok(compare.stderr.includes(`compare: wrote ${page}`), compare.stderr)
  const results = [base, next].map(
    (dir) => JSON.parse(readFileSync(join(dir, 'bench_result.json'), 'utf8')) as BenchResult,
  )
  const phrase = (result: BenchResult): string =>
    result.capacity !== null
      ? `${result.capacity.value} under the SLOs`
      : result.saturation !== null
        ? `knee at ${result.saturation.value}`
        : 'no knee'
  const tab = await chromiumPage()
  try {
    const errors: string[] = []
    tab.on('pageerror', (error) => errors.push(error.message))
    tab.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await tab.goto(pathToFileURL(page).href)
    // The mark a person sees first says what the exit code says (issue 36).
    const mark = { 0: 'PASS', 1: 'FAIL', 5: 'INCONCLUSIVE' }[compare.code as 0 | 1 | 5]
    assert.equal((await tab.textContent('.outcome'))?.trim(), mark)
    const markBox = await tab.locator('.outcome').boundingBox()
    const answerBox = await tab.locator('.answer-line').boundingBox()
    assert.ok(markBox !== null && answerBox !== null && markBox.y < answerBox.y, 'the mark comes first')
    assert.equal(
      (await tab.textContent('.answer-line'))?.trim(),
      `Capacity: base ${phrase(results[0] as BenchResult)} → new ${phrase(results[1] as BenchResult)}`,
    )
    // Each run's headline, with its own levels' patterns highlighted.
    for (const [index, label] of ['base', 'new'].entries()) {
      const levels = (results[index] as BenchResult).levels
      assert.deepEqual(
        await tab.$$eval(`.run[data-run="${label}"] .patterns tr.match`, (rows) =>
          rows.map((row) => row.getAttribute('data-verdict')),
        ),
        ['healthy', 'saturated', 'overloaded', 'client-bound', 'misconfigured'].filter((verdict) =>
          levels.some((level) => level.verdict === verdict),
        ),
        `${label}: the patterns its levels show`,
      )
    }
    const charts = await tab.$$eval('figure[data-chart]', (figures) =>
      figures.map((figure) => ({
        name: figure.getAttribute('data-chart'),
        lines: figure.querySelectorAll('.mark-line.role-mark path').length,
        points: figure.querySelectorAll('.mark-symbol.role-mark path').length,
        knees: [...figure.querySelectorAll('[class*="knee_"] line')].map((line) =>
          line.getAttribute('aria-label'),
        ),
      })),
    )
    assert.deepEqual(
      charts.map((chart) => chart.name),
      ['compare-ttft', 'compare-throughput', 'compare-success-rate'],
    )
    const levelCount = results.reduce((sum, result) => sum + result.levels.length, 0)
    for (const chart of charts) {
      assert.equal(chart.lines, 2, `${chart.name}: a line per run`)
      assert.equal(chart.points, levelCount, `${chart.name}: a point per run and level`)
      assert.deepEqual(
        chart.knees,
        results.flatMap((result, index) =>
          result.saturation === null
            ? []
            : [`${index === 0 ? 'base' : 'new'} knee ${result.saturation.value}`],
        ),
        `${chart.name}: each run's knee`,
      )
    }
    const gated = compare.stdout.split('\n').filter((line) => /^\| \d/.test(line)).length
    assert.ok(gated > 0)
    assert.equal(
      await tab.$$eval('table.comparison tbody tr', (rows) => rows.length),
      gated,
      "the table has the terminal's rows",
    )
    mkdirSync(ARTIFACTS, { recursive: true })
    await tab.screenshot({ path: join(ARTIFACTS, 'compare.png'), fullPage: true })
    assert.deepEqual(errors, [])
  } finally {
    await tab.close()
  }
})
