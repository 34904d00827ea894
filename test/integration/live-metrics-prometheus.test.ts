import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { startSimulator } from '../../src/sim/server.js'
import { simRunArgs, spawnCli } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { tempDir } from '../helpers/run-config.js'
import { waitForValue } from '../helpers/wait.js'

/**
 * The round trip a Grafana board relies on: a real Prometheus (Debian's `prometheus` package, which
 * .ci/run installs) scrapes `llmbench run --metrics-port` every second, and its HTTP API reads back
 * the same request count as the run's requests.jsonl.
 */

const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0

interface Vector {
  metric: Record<string, string>
  value: [number, string]
}

async function query(base: string, promql: string): Promise<Vector[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)
  const body = (await response.json()) as { status: string; data: { result: Vector[] } }
  assert.equal(body.status, 'success', JSON.stringify(body))
  return body.data.result
}

async function scalar(base: string, promql: string): Promise<number | null> {
  const [first] = await query(base, promql)
  return first === undefined ? null : Number(first.value[1])
}

/** Prometheus takes its time to start and to scrape: a minute, asked four times a second. */
const PROMETHEUS_LIMIT_MS = 60_000
const PROMETHEUS_POLL_MS = 250

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const hard = setTimeout(() => child.kill('SIGKILL'), 10_000)
  return exited.finally(() => clearTimeout(hard))
}

test("a real Prometheus scraping --metrics-port reads back the run's request count, tokens, TTFT count, level and in-flight", {
  timeout: 240_000,
  skip: hasPrometheus ? false : 'the prometheus binary is not installed (Debian: apt-get install prometheus)',
}, async () => {
  const dir = tempDir()
  const metricsPort = await freePort()
  const prometheusPort = await freePort()
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: llmbench',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${metricsPort}']`,
      '',
    ].join('\n'),
  )
  const prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let prometheusLog = ''
  prometheus.stderr?.on('data', (data: Buffer) => {
    prometheusLog += data.toString()
  })
  const base = `http://127.0.0.1:${prometheusPort}`
  const sim = await startSimulator({ prefill_base_ms: 5, decode_base_ms: 5 })
  const out = join(dir, 'run')
  try {
    await waitForValue(
      () => fetch(`${base}/-/ready`).then((r) => r.status),
      (s) => s === 200,
      'prometheus ready',
      PROMETHEUS_LIMIT_MS,
      PROMETHEUS_POLL_MS,
    )
    // Timed levels: the run lasts ~8 s whatever the machine's speed, room for several 1 s scrapes.
    const run = spawnCli(
      simRunArgs(sim.url, out, {
        levels: '1,4',
        duration: 4,
        warmup: 0,
        'input-tokens': 32,
        'output-tokens': 16,
        'no-calibrate': true,
        'no-server-metrics': true,
        'metrics-port': metricsPort,
      }),
    )
    // The series appears while the run is going: the endpoint is scraped live, not only at the end.
    const during = await waitForValue(
      async () =>
        (await query(base, 'llmbench_requests_total')).reduce((sum, s) => sum + Number(s.value[1]), 0),
      (value) => value > 0,
      'llmbench_requests_total in Prometheus during the run',
      PROMETHEUS_LIMIT_MS,
      PROMETHEUS_POLL_MS,
    )
    const code = await run.exited
    assert.equal(code, 0, run.stderr())
    assert.match(run.stderr(), new RegExp(`live metrics: http://127\\.0\\.0\\.1:${metricsPort}/metrics`))

    const records = readRecords(join(out, 'requests.jsonl')).records
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
    // After the run the endpoint waits for one more scrape, so the final count reaches Prometheus.
    // Once it is closed, Prometheus marks the series stale (an instant query returns nothing): the
    // last value scraped is read with last_over_time.
    const total = await waitForValue(
      () => scalar(base, 'sum(last_over_time(llmbench_requests_total[10m]))'),
      (value) => value === records.length,
      `sum(llmbench_requests_total) = ${records.length} records`,
      PROMETHEUS_LIMIT_MS,
      PROMETHEUS_POLL_MS,
    )
    assert.ok(during <= records.length)
    const series = await query(base, 'last_over_time(llmbench_requests_total[10m])')
    const measured = series
      .filter((s) => s.metric.phase === 'measure' && s.metric.outcome === 'ok')
      .reduce((sum, s) => sum + Number(s.value[1]), 0)
    assert.equal(
      measured,
      result.levels.reduce((sum, level) => sum + level.ok, 0),
    )
    assert.deepEqual(
      [...new Set(series.filter((s) => s.metric.phase === 'measure').map((s) => s.metric.level))].sort(),
      ['1', '4'],
    )
    const outputTokens = records.reduce((sum, record) => sum + record.output_tokens, 0)
    assert.equal(
      await scalar(base, 'sum(last_over_time(llmbench_tokens_total{kind="output"}[10m]))'),
      outputTokens,
    )
    const withFirstToken = records.filter((record) => record.first_token_at !== null).length
    assert.equal(await scalar(base, 'sum(last_over_time(llmbench_ttft_seconds_count[10m]))'), withFirstToken)
    assert.equal(await scalar(base, 'max_over_time(llmbench_level[10m])'), 4)
    const inFlight = await scalar(base, 'max_over_time(llmbench_in_flight_requests[10m])')
    assert.ok(
      inFlight !== null && inFlight >= 1 && inFlight <= 4,
      `in flight at most the 4 streams: ${inFlight}`,
    )
    const scrapes = await scalar(base, 'count_over_time(up{job="llmbench"}[10m])')
    assert.ok(scrapes !== null && scrapes >= 2, `scrapes: ${scrapes}`)
    console.log(
      `prometheus round trip: ${records.length} records, sum(llmbench_requests_total) = ${total}, ` +
        `output tokens ${outputTokens}, ${scrapes} scrapes, max in flight ${inFlight}`,
    )
  } catch (error) {
    throw new Error(`${(error as Error).message}\nprometheus log (tail):\n${prometheusLog.slice(-2000)}`)
  } finally {
    await sim.close()
    await stopProcess(prometheus)
  }
})
