import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { compareRuns, DEFAULT_MIN_CHANGE } from '../../src/compare/compare.js'
import { percentileOfSorted } from '../../src/metrics/distribution.js'
import { LEVEL_FIGURES } from '../../src/metrics/figure-catalogue.js'
import { figureKey, MEASURES, measuresFor } from '../../src/metrics/measures.js'
import { PrecisionTracker } from '../../src/metrics/precision.js'
import { parsePrecisionKey } from '../../src/metrics/precision-key.js'
import { evaluateSlos, oldSloSpellingNote, parseSloKey, toSlos } from '../../src/metrics/slo.js'
import type { RequestRecord } from '../../src/records/types.js'
import { renderLevelsCsv } from '../../src/report/levels-csv.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

/**
 * A measure is one entry in metrics/measures.ts: each consumer that iterates over the catalogue
 * takes it by the uses the entry declares. ITL p99 was added to SLOs and --precision that way (its
 * entry's `slo` and `precision`), and is held here in each, with values worked out by hand.
 */

/** 40 requests of 11 tokens each; request k's gaps are 10 ms, but one gap of request k is 10 + k ms. */
function records(): RequestRecord[] {
  return Array.from({ length: 40 }, (_, k) => {
    const sent = k * 50
    const times = [sent + 20]
    for (let i = 1; i < 11; i++) times.push((times[i - 1] as number) + (i === 5 ? 10 + k : 10))
    return makeRecord({ seq: k, sent_at: sent, token_times: times })
  })
}

/** The meta compare reads of a run of one level (1 stream). */
function metaOf(more: object): RunMeta {
  return {
    target: { model: 'm', base_url: 'http://x', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 8, output_tokens: 11, stream: true },
    load: { levels: [1], warmup_requests: 0 },
    percentiles: [50],
    levels_run: [{ value: 1 }],
    ...more,
  } as unknown as RunMeta
}

/** Every gap of every request, sorted: what ITL's percentiles are of. */
function gaps(list: readonly RequestRecord[]): Float64Array {
  const out: number[] = []
  for (const record of list)
    for (let i = 1; i < record.token_times.length; i++)
      out.push((record.token_times[i] as number) - (record.token_times[i - 1] as number))
  return Float64Array.from(out).sort()
}

test("every SLO measure parses as <key>_p<N> and is judged in its own direction; a latency's older <key>_p<N>_ms is read as renamed", () => {
  for (const measure of measuresFor('slo')) {
    const key = figureKey(measure, 95)
    const parsed = parseSloKey(key)
    assert.ok(typeof parsed !== 'string', `${key}: ${parsed}`)
    assert.equal(parsed.metric, measure.key)
    assert.equal(parsed.better, measure.better, key)
    assert.equal(parsed.renamed, undefined, key)
    const old = parseSloKey(`${key}_ms`)
    if (measure.unit === 'ms') {
      assert.ok(typeof old !== 'string', `${key}_ms: ${old}`)
      assert.deepEqual(old, { ...parsed, renamed: key })
    } else assert.equal(typeof old, 'string', `${key}_ms is not a spelling of an index`)
  }
  // A measure the catalogue does not list for SLOs is refused, naming the ones it does.
  const refused = parseSloKey('ttfx_p95')
  assert.equal(typeof refused, 'string')
  for (const measure of measuresFor('slo').filter((m) => m.unit === 'ms'))
    assert.ok((refused as string).includes(measure.key), `${measure.key} in ${refused}`)
})

test('an SLO table in the older spelling is judged as in the new one, and its note names each new key once', () => {
  const list = records()
  const now = evaluateSlos(list, toSlos({ ttft_p95: 30, itl_p99: 30 }), 60_000, 2)
  const before = evaluateSlos(list, toSlos({ ttft_p95_ms: 30, itl_p99_ms: 30 }), 60_000, 2)
  assert.deepEqual(
    before.checks.map(({ key: _, ...check }) => check),
    now.checks.map(({ key: _, ...check }) => check),
  )
  assert.equal(before.good_share, now.good_share)
  assert.equal(oldSloSpellingNote({ ttft_p95: 30, fluidity_p90: 0.9 }), null)
  const note = oldSloSpellingNote({ ttft_p95_ms: 30, tpot_p50: 5, itl_p99_ms: 30 }) as string
  assert.match(note, /ttft_p95_ms is now ttft_p95, itl_p99_ms is now itl_p99/)
  assert.ok(!note.includes('tpot'), note)
})

test('ITL p99 as an SLO: the p99 of every gap, and a request is good only when each of its gaps is within', () => {
  const list = records()
  const p99 = percentileOfSorted(gaps(list), 99) as number
  // The long gaps are 10..49 ms: 40 of 400 gaps, so p99 lies among them.
  assert.ok(p99 > 40, String(p99))
  const slo = evaluateSlos(list, toSlos({ itl_p99_ms: 30 }), 60_000, 2)
  const check = slo.checks[0]
  assert.equal(check?.key, 'itl_p99_ms')
  assert.equal(check?.value_ms, Math.round(p99 * 100) / 100)
  assert.equal(check?.met, false)
  // Requests 0..20 have their long gap within 30 ms (10 + k <= 30): 21 of 40.
  assert.equal(slo.good_share, 21 / 40)
  assert.equal(evaluateSlos(list, toSlos({ itl_p99_ms: 60 }), 60_000, 2).checks[0]?.met, true)
})

test('every precision measure parses as <key>_p<N>; ITL p99 is tracked over the gaps', () => {
  for (const measure of measuresFor('precision')) {
    const parsed = parsePrecisionKey(`${measure.key}_p99`)
    assert.deepEqual(parsed, { kind: 'percentile', metric: measure.key, percentile: 99 })
  }
  assert.equal(typeof parsePrecisionKey('ttfr_p99'), 'string', 'a measure without precision is refused')
  const list = records()
  const tracker = new PrecisionTracker({ itl_p99: 50 })
  for (const record of list) tracker.add(record)
  const [figure] = tracker.assess()
  assert.equal(figure?.key, 'itl_p99')
  assert.equal(figure?.value, percentileOfSorted(gaps(list), 99))
})

test('every compared measure is compared at a percentile a gate names, with its floor by default', () => {
  const list = records()
  const meta = metaOf({})
  const gates = Object.fromEntries(measuresFor('compare').map((measure) => [`${measure.key}_p99`, 0.1]))
  const comparison = compareRuns({ meta, records: list }, { meta, records: list }, gates, { rounds: 50 })
  const metrics = comparison.levels[0]?.metrics ?? []
  for (const measure of measuresFor('compare')) {
    const compared = metrics.find((metric) => metric.metric === `${measure.key}_p99`)
    assert.ok(compared !== undefined, `${measure.key}_p99 compared`)
    assert.equal(compared.threshold, 0.1)
    assert.equal(compared.floor, DEFAULT_MIN_CHANGE[measure.key] ?? null)
    assert.equal(DEFAULT_MIN_CHANGE[measure.key], measure.floor ?? undefined)
  }
  const itl = metrics.find((metric) => metric.metric === 'itl_p99')
  assert.equal(itl?.base, Math.round((percentileOfSorted(gaps(list), 99) as number) * 1000) / 1000)
  assert.equal(itl?.regressed, false)
})

test('every measure with a level distribution has its levels.csv columns and its report column', () => {
  const result = JSON.parse(
    readFileSync(new URL('../fixtures/rendered/conc/bench_result.json', import.meta.url), 'utf8'),
  ) as BenchResult
  const header = renderLevelsCsv(result).split('\r\n')[0]?.split(',') ?? []
  const withField = MEASURES.filter((measure) => 'field' in measure)
  assert.ok(withField.some((measure) => measure.key === 'itl'))
  for (const measure of withField) {
    for (const column of ['mean', 'p50', 'p95', 'p99'])
      assert.ok(header.includes(`${measure.key}_${column}_ms`), `${measure.key}_${column}_ms in ${header}`)
    const figure = LEVEL_FIGURES.find((entry) => measure.field in entry.fields)
    assert.ok(figure !== undefined, `${measure.field} is a level figure`)
    assert.ok(
      figure.columns?.some((column) => column.name === measure.name),
      `${measure.field}'s column is named ${measure.name}`,
    )
  }
})

test('a measure better higher is worse lower between runs too: fluidity_p90 falling over --repeat runs regresses', () => {
  const deadlines = { prefill_ms: 50, decode_ms: 10, basis: 'test' }
  /** Three runs of 30 requests; each token `gap` ms after the one before. */
  const run = (gap: number): RequestRecord[] =>
    [0, 1, 2].flatMap((repeat) =>
      Array.from({ length: 30 }, (_, k) => {
        const sent = repeat * 10_000 + k * 100
        const times = Array.from({ length: 10 }, (_, i) => sent + 20 + i * gap)
        return makeRecord({ seq: repeat * 30 + k, repeat, sent_at: sent, token_times: times })
      }),
    )
  const meta = metaOf({ fluidity: deadlines })
  const gates = { fluidity_p90: 0.05 }
  // On pace (every token within 10 ms of the last) against three times slower: most tokens late.
  const slower = compareRuns({ meta, records: run(5) }, { meta, records: run(30) }, gates, { rounds: 50 })
  assert.equal(slower.basis.kind, 'between-run')
  const fluidity = slower.levels[0]?.metrics.find((metric) => metric.metric === 'fluidity_p90')
  assert.ok(fluidity !== undefined && fluidity.base !== null && fluidity.new !== null)
  assert.ok(fluidity.new < fluidity.base, JSON.stringify(fluidity))
  assert.ok(fluidity.regressed, JSON.stringify(fluidity))
  assert.ok(slower.regressions.some((r) => r.metric === 'fluidity_p90'))
  // The other way round it improved: no regression.
  const faster = compareRuns({ meta, records: run(30) }, { meta, records: run(5) }, gates, { rounds: 50 })
  assert.ok(!faster.regressions.some((r) => r.metric === 'fluidity_p90'), JSON.stringify(faster.regressions))
  // Within one run (no repeat stamps) too: the regression clears the drift band on its worse side.
  const once = (gap: number) => run(gap).map(({ repeat, ...record }) => record)
  const within = compareRuns({ meta, records: once(5) }, { meta, records: once(30) }, gates, { rounds: 50 })
  assert.equal(within.basis.kind, 'within-run')
  assert.ok(
    within.regressions.some((r) => r.metric === 'fluidity_p90'),
    JSON.stringify(within.levels[0]?.metrics),
  )
})

test("the per-level table's latency columns are named by their measure (name and unit from measures.ts)", () => {
  const withColumns = MEASURES.filter((measure) => 'field' in measure)
  assert.ok(withColumns.length >= 4, 'TTFT, TPOT, ITL and E2E have a level field')
  for (const measure of withColumns) {
    const figure = LEVEL_FIGURES.find((f) => Object.keys(f.fields)[0] === measure.field)
    const column = figure?.columns?.[0]
    assert.ok(column !== undefined, `${measure.field} has a column`)
    assert.equal(column.name, measure.name)
    assert.ok(
      typeof column.head === 'string' && column.head.startsWith(`${measure.name} ${measure.unit}\n`),
      String(column.head),
    )
  }
})
