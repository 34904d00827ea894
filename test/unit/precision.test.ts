import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { levelsSizedByDefault, loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags } from '../../src/config/settings.js'
import { PrecisionTracker, precisionLine } from '../../src/metrics/precision.js'
import { parsePrecisionKey, precisionPairs } from '../../src/metrics/precision-key.js'
import {
  boundedFrom,
  logSpreadOfProbes,
  normalQuantile,
  percentileHalfWidthPct,
  requestsForPercentile,
} from '../../src/metrics/sample-size.js'
import type { RequestRecord } from '../../src/records/types.js'
import {
  DEFAULT_PRECISION,
  DEFAULT_PRECISION_FLOOR,
  defaultLevelSeconds,
  defaultPrecisionLoad,
  describeDefaultSizing,
  levelRequestBudget,
  PrecisionWatch,
  preciseHold,
} from '../../src/run/level/precision-watch.js'
import { describePairedSizing, PAIRED_DEFAULT_REQUESTS, shapedConfig } from '../../src/run/plan/run-shape.js'
import { prepareRun } from '../../src/run/start-run.js'
import { makeRecord } from '../helpers/records.js'

test('precision keys: latency percentiles and tput; anything else says what was expected', () => {
  assert.deepEqual(parsePrecisionKey('ttft_p95'), { kind: 'percentile', metric: 'ttft', percentile: 95 })
  assert.deepEqual(parsePrecisionKey('e2e_p99.9'), { kind: 'percentile', metric: 'e2e', percentile: 99.9 })
  assert.deepEqual(parsePrecisionKey('tput'), { kind: 'throughput' })
  // ITL takes precision targets since its measure says so (measures.ts); a reasoning phase does not.
  assert.deepEqual(parsePrecisionKey('itl_p50'), { kind: 'percentile', metric: 'itl', percentile: 50 })
  assert.match(String(parsePrecisionKey('ttfr_p50')), /expected tput or a percentile/)
  assert.match(String(parsePrecisionKey('ttft_p100')), /above 0 and below 100/)
  assert.deepEqual(precisionPairs('ttft_p95=5%, tput=3'), { ttft_p95: 5, tput: 3 })
  assert.ok(Number.isNaN(precisionPairs('tput=').tput))
})

test('sample sizes: the tails need far more requests than the median, and none bounds p99 below 368', () => {
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959964) < 1e-6)
  assert.ok(Math.abs(normalQuantile(0.01) + 2.326348) < 1e-6)
  assert.equal(boundedFrom(0.95), 72)
  assert.equal(boundedFrom(0.99), 368)
  const p50 = requestsForPercentile(50, 10, 0.2)
  const p95 = requestsForPercentile(95, 10, 0.2)
  const p99 = requestsForPercentile(99, 10, 0.2)
  assert.ok(p50 < p95 && p95 < p99, `${p50} < ${p95} < ${p99}`)
  // Halving the target quadruples the requests, where the bound does not decide.
  assert.ok(Math.abs(requestsForPercentile(50, 5, 0.2) / p50 - 4) < 0.2)
  assert.equal(percentileHalfWidthPct(99, 100, 0.2), null)
  // Round trip: p50 at the advised count is within its target.
  assert.ok((percentileHalfWidthPct(50, p50, 0.2) ?? 100) <= 10)
  // Three probes at 100, 110 and 121 ms: a log range of 0.19 over 1.69.
  assert.ok(Math.abs(logSpreadOfProbes({ min: 100, max: 121 }, 3) - Math.log(1.21) / 1.693) < 1e-9)
  assert.equal(logSpreadOfProbes({ min: 100, max: 100 }, 3), 0.05, 'never below the floor')
})

function record(i: number, ttft: number, e2e: number): RequestRecord {
  // Ten tokens from the first at `ttft` to the last at `e2e`.
  const times = Array.from({ length: 10 }, (_, k) => i * 100 + ttft + ((e2e - ttft) * k) / 9)
  return makeRecord({ seq: i, sent_at: i * 100, token_times: times })
}

test('the tracker: a tight median is precise, a spread one is not, and an unbounded p95 is never met', () => {
  const tight = new PrecisionTracker({ ttft_p50: 5, ttft_p95: 50 })
  for (let i = 0; i < 40; i++) tight.add(record(i, 100 + (i % 5), 200))
  const [median, tail] = tight.assess()
  assert.equal(median?.met, true, JSON.stringify(median))
  assert.ok((median?.reached_pct ?? 100) < 5)
  assert.equal(tail?.reached_pct, null, 'p95 of 40 has no upper end')
  assert.equal(tail?.met, false)

  const spread = new PrecisionTracker({ ttft_p50: 5 })
  let seed = 7
  for (let i = 0; i < 40; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    spread.add(record(i, 50 + (seed % 200), 400))
  }
  assert.equal(spread.assess()[0]?.met, false, JSON.stringify(spread.assess()))
  assert.equal(spread.requests, 40)
})

test('precision lines say why a level stopped where it did, and by how much a figure fell short', () => {
  const figure = { key: 'ttft_p95', target_pct: 5, value: 120, reached_pct: 7.5, met: false }
  const base = { floor: 40, max_requests: 400, max_duration_s: null, met: false, requests: 400 }
  assert.equal(
    precisionLine('level 8', { ...base, figures: [figure], stopped_by: 'max_requests' }),
    'level 8: reached the ceiling of 400 requests (400 requests) before ttft_p95 was within ±5% (it is ±7.5%, 1.5× the target)',
  )
  const met = { ...figure, reached_pct: 4.2, met: true }
  assert.equal(
    precisionLine('level 8', { ...base, figures: [met], met: true, requests: 97, stopped_by: 'precise' }),
    'level 8: ran 97 requests until precise: ttft_p95 ±4.2% (target 5%)',
  )
  // Precise when checked; the requests in flight then widened it past the target: said, not hidden.
  assert.equal(
    precisionLine('level 4', { ...base, figures: [figure], requests: 204, stopped_by: 'precise' }),
    'level 4: stopped as its figures reached their targets, but with the requests then in flight (204 in all) ttft_p95 ended past its target: ttft_p95 ±7.5% (target 5%)',
  )
  assert.match(
    precisionLine('level 8', {
      ...base,
      max_duration_s: 30,
      requests: 120,
      figures: [{ ...figure, reached_pct: null }],
      stopped_by: 'max_duration',
    }),
    /reached the ceiling of 30 s \(120 requests\) before ttft_p95 could be bounded/,
  )
})

test('levels nobody sized run by the default precision; sized ones, rate mode, sessions and shards as they were', () => {
  const fromFlags = (flags: ConfigFlags) =>
    loadRunConfig({ configFiles: [], flags: { base_url: 'http://h/v1', model: 'm', ...flags } })
  const unsized = fromFlags({})
  assert.equal(levelsSizedByDefault(unsized), true)
  const load = defaultPrecisionLoad(unsized, false)
  assert.deepEqual(load.precision, DEFAULT_PRECISION)
  assert.equal(load.requests_per_level, DEFAULT_PRECISION_FLOOR)
  assert.equal(levelRequestBudget(load), 10 * DEFAULT_PRECISION_FLOOR)
  assert.equal(defaultPrecisionLoad(unsized, true), unsized.load, 'a shard keeps fixed levels')
  for (const sized of [{ requests: 40 }, { duration: 10 }, { precision: { tput: 3 } }] as ConfigFlags[])
    assert.equal(levelsSizedByDefault(fromFlags(sized)), false, JSON.stringify(sized))
  assert.equal(defaultPrecisionLoad(fromFlags({ mode: 'rate' }), false).precision, null)
  assert.equal(defaultPrecisionLoad(fromFlags({ sessions: true }), false).precision, null)
  assert.equal(defaultPrecisionLoad(fromFlags({ repeat: 3 }), false).precision, null)
  // A time cap shared by the levels, said up front (issue 36: a newcomer's 33-minute plan).
  assert.equal(load.max_duration_per_level_s, defaultLevelSeconds(load.levels.length))
  assert.equal(defaultLevelSeconds(6), 20)
  assert.equal(defaultLevelSeconds(1), 60)
  assert.equal(defaultLevelSeconds(40), 10)
  assert.equal(load.stop_out_of_reach, true)
  assert.match(
    describeDefaultSizing(load) ?? '',
    /until tput ±5%, ttft_p50 ±10%, 20–200 requests and at most \d+ s/,
  )
  assert.equal(describeDefaultSizing(fromFlags({ precision: { tput: 3 } }).load), null)
})

/** A load asking for `precision` from a floor of `floor` requests, a ceiling of 200 and no time cap. */
function precisionLoad(precision: Record<string, number>, floor: number) {
  return {
    ...loadRunConfig({ configFiles: [], flags: { base_url: 'http://h/v1', model: 'm' } }).load,
    precision,
    requests_per_level: floor,
    max_requests_per_level: 200,
    max_duration_per_level_s: null,
  }
}

test('a level stops only once its figures have stayed precise over as many records as it has streams in flight, and 4 at least', () => {
  const load = precisionLoad({ ttft_p50: 10 }, 12)
  for (const streams of [1, 4, 8]) {
    const hold = Math.max(4, streams)
    const records = Array.from({ length: 200 }, (_, i) => record(i, 100 + ((i * 7) % 9), 300))
    // The first count at which the figures alone say precise.
    const alone = new PrecisionTracker({ ttft_p50: 10 })
    let precise = 0
    for (const r of records) {
      alone.add(r)
      if (alone.requests >= 12 && alone.assess().every((figure) => figure.met)) {
        precise = alone.requests
        break
      }
    }
    assert.ok(precise >= 12, 'the series becomes precise')
    let stoppedAt = 0
    const watch = new PrecisionWatch(load, streams, () => {
      stoppedAt = watch.finish(false).requests
    })
    watch.start()
    for (const r of records) {
      if (stoppedAt > 0) break
      watch.add(r)
    }
    // The requests still in flight when it stops are measured too: it waits out that many records,
    // and a few at least (one lucky check of a dozen values is not precision).
    assert.equal(preciseHold(streams), hold)
    assert.ok(
      stoppedAt >= precise + hold,
      `${streams} streams: precise at ${precise}, stopped at ${stoppedAt}`,
    )
    assert.ok(
      stoppedAt <= precise + hold + 2 * streams,
      `${streams} streams: precise at ${precise}, stopped at ${stoppedAt}`,
    )
  }
})

test('a --paired interleave run nobody sized sends 80 requests to each target a level; a sized one, or together, keeps its size, and the plan says which', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'llmbench-paired-')), 'config.toml')
  writeFileSync(file, '[target]\nbase_url = "http://a/v1"\nmore_base_urls = ["http://b/v1"]\nmodel = "m"\n')
  const load = (flags: ConfigFlags) =>
    loadRunConfig({ configFiles: [file], flags: { paired: true, ...flags } })
  const unsized = load({})
  const shaped = shapedConfig(unsized, false)
  assert.equal(shaped.load.requests_per_level, PAIRED_DEFAULT_REQUESTS)
  assert.equal(shaped.load.precision, null, 'paired blocks are paired by size: never precision-sized')
  assert.match(
    describePairedSizing(unsized, shaped) ?? '',
    /each paired level sends 80 requests to each target/,
  )
  const sized = load({ requests: 24 })
  assert.equal(shapedConfig(sized, false).load.requests_per_level, 24)
  assert.equal(describePairedSizing(sized, shapedConfig(sized, false)), null)
  const together = load({ paired_mode: 'together' })
  assert.equal(shapedConfig(together, false).load.requests_per_level, 40)
  assert.equal(describePairedSizing(together, shapedConfig(together, false)), null)
})

test('a default-sized level whose spread puts its target out of reach stops early and says so; an asked one runs on', () => {
  const noisy = (stop: boolean) => {
    const load = { ...precisionLoad({ ttft_p50: 5 }, 20), ...(stop ? { stop_out_of_reach: true } : {}) }
    let stopped = false
    const watch = new PrecisionWatch(load, 1, () => {
      stopped = true
    })
    watch.start()
    let seed = 11
    let sent = 0
    while (!stopped && sent < 200) {
      seed = (seed * 1103515245 + 12345) % 2147483648
      watch.add(record(sent++, 50 + (seed % 400), 600))
    }
    return watch.finish(false)
  }
  const given = noisy(true)
  assert.equal(given.stopped_by, 'out_of_reach', JSON.stringify(given))
  assert.ok(given.requests >= 40 && given.requests < 100, `${given.requests} requests`)
  assert.match(
    precisionLine('c=1', given),
    /stopped at \d+ requests, precision out of reach: ttft_p50 ±[\d.]+% \(target ±5%\)/,
  )
  assert.equal(noisy(false).requests, 200, 'an asked precision runs to its ceiling')
})

test('the library sizes unsized levels as the CLI does: prepareRun gives the default precision (issue 37 item 4)', () => {
  const out = mkdtempSync(join(tmpdir(), 'llmbench-prepare-'))
  const config = loadRunConfig({
    configFiles: [],
    flags: { base_url: 'http://h/v1', model: 'm', out: join(out, 'r') },
  })
  const run = prepareRun({ config, env: {} })
  assert.deepEqual(run.config.load.precision, DEFAULT_PRECISION)
  assert.equal(run.config.load.stop_out_of_reach, true)
  const sized = loadRunConfig({
    configFiles: [],
    flags: { base_url: 'http://h/v1', model: 'm', requests: 12, out: join(out, 's') },
  })
  assert.equal(prepareRun({ config: sized, env: {} }).config.load.precision, null)
})
