import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LEVEL_FIGURES } from '../../src/metrics/figure-catalogue.js'
import { LevelSummarizer, type SummaryOptions, summarizeLevel } from '../../src/metrics/summarize.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

const RATE: SummaryOptions = {
  percentiles: [50, 95, 99],
  timeoutMs: 30_000,
  slos: [{ key: 'ttft_p95_ms', metric: 'ttft', percentile: 95, threshold: 100, better: 'lower' }],
  mode: 'request_rate',
  pricing: { input_per_mtok: 1, output_per_mtok: 2, currency: 'USD' },
}

/** A level of a few successes, one failure and one record of another level. */
function records(): RequestRecord[] {
  return [
    ...[0, 1, 2, 3].map((k) =>
      makeRecord({
        seq: k,
        level: 2,
        sent_at: k * 100,
        token_times: [k * 100 + 30, k * 100 + 40, k * 100 + 55],
      }),
    ),
    makeRecord({
      seq: 4,
      level: 2,
      sent_at: 400,
      end_at: 450,
      error: { class: 'http_5xx', message: 'HTTP 503' },
    }),
    makeRecord({ seq: 5, level: 4, sent_at: 0, token_times: [10, 20] }),
  ]
}

test('summarizeLevel makes one pass: it summarizes a stream of records that can be read only once', () => {
  const list = records()
  let passes = 0
  const once: Iterable<RequestRecord> = {
    [Symbol.iterator]() {
      passes++
      if (passes > 1) throw new Error('the records were read a second time')
      return list[Symbol.iterator]()
    },
  }
  const level = summarizeLevel(2, once, RATE, { cpu_percent: 0, loops: [] })
  assert.equal(passes, 1)
  assert.deepEqual(level, summarizeLevel(2, list, RATE, { cpu_percent: 0, loops: [] }))
  assert.equal(level.requests, 5)
})

test('a level holds every field of the catalogue that applies to it, in the catalogue order', () => {
  const level = summarizeLevel(2, records(), RATE, { cpu_percent: 0, loops: [] })
  const fromRecords = LEVEL_FIGURES.filter((figure) => !('from' in figure.source))
  // Embeddings apply only to a protocol generating nothing; in_band, reasoning, turns and
  // cache_effect are absent when no request carried them, and acceptance_length when no cadence told
  // speculation; speculative is there, its cadence read from any stream of two events or more.
  const expected = fromRecords
    .filter(
      (figure) =>
        figure.applies?.generates !== false &&
        (figure.absentWhenNull !== true || 'speculative' in figure.fields),
    )
    .flatMap((figure) => Object.keys(figure.fields))
  assert.deepEqual(Object.keys(level), expected)
  assert.notEqual(level.schedule, null, 'request-rate figures are there in request-rate mode')
  assert.notEqual(level.slo, null)
  assert.notEqual(level.cost, null)
  const closed = summarizeLevel(
    2,
    records(),
    { ...RATE, mode: 'concurrency', slos: [], pricing: null },
    {
      cpu_percent: 0,
      loops: [],
    },
  )
  for (const key of ['schedule', 'slo', 'cost', 'ttft_ms_from_intended', 'e2e_ms_from_intended'] as const)
    assert.equal(closed[key], null, `${key} is null where it does not apply`)
  const embeddings = summarizeLevel(
    2,
    records(),
    { ...RATE, protocol: 'embeddings' },
    { cpu_percent: 0, loops: [] },
  )
  assert.deepEqual(embeddings.embeddings, { inputs_per_s: 8.89, input_tokens_per_s: 88.89 })
})

test("a summarizer fed only its level's records equals summarizeLevel over the mixed list (which picks them), and knows the window", () => {
  const list = records()
  const live = new LevelSummarizer(2, RATE)
  for (const record of list) if (record.level === 2) live.add(record)
  const stats = { cpu_percent: 3, loops: [], arrivals: { planned: 6, sent: 5, dropped: 1 } }
  assert.deepEqual(live.result(stats), summarizeLevel(2, list, RATE, stats))
  assert.deepEqual(live.window(), { start: 0, end: 450 })
})

test('an unreadable answer is said in the words of the protocol in use, not always OpenAI chat', () => {
  const unreadable = [0, 1].map((k) =>
    makeRecord({
      seq: k,
      level: 2,
      sent_at: k,
      end_at: k + 5,
      error: { class: 'stream', message: 'bad event' },
    }),
  )
  const closed = { ...RATE, mode: 'concurrency' as const, slos: [], pricing: null }
  const hint = (protocol: SummaryOptions['protocol']) =>
    summarizeLevel(2, unreadable, { ...closed, protocol }, { cpu_percent: 0, loops: [] }).misconfiguration
      ?.hint
  assert.match(hint('messages') ?? '', /not as an Anthropic Messages stream/)
  assert.match(hint('responses') ?? '', /not as an OpenAI Responses API stream/)
  assert.match(hint(undefined) ?? '', /not as an OpenAI chat completions stream/)
})
