import assert from 'node:assert/strict'
import { test } from 'node:test'
import { serverViewOf } from '../../src/analysis/server-view.js'
import { inBandFigures } from '../../src/metrics/in-band-figures.js'
import { reasoningFigures, reasoningNotes, reasoningPhrase } from '../../src/metrics/reasoning-figures.js'
import { evaluateSlos, parseSloKey, toSlos } from '../../src/metrics/slo.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import type { RequestRecord } from '../../src/records/types.js'
import { implausibleUsage } from '../../src/records/usage-check.js'
import { makeRecord } from '../helpers/records.js'

const PERCENTILES = [50, 95]

/** A request that thought for `reasoning` events (one token each, 10 ms apart) then answered `answer` tokens. */
function reasoned(sentAt: number, reasoning: number, answer: number): RequestRecord {
  const times = Array.from({ length: reasoning + answer }, (_, i) => sentAt + 100 + 10 * i)
  return makeRecord({
    sent_at: sentAt,
    token_times: times,
    first_reasoning_at: reasoning > 0 ? (times[0] as number) : null,
    first_answer_at: times[reasoning] ?? null,
    reasoning_events: reasoning > 0 ? reasoning : undefined,
    reasoning_tokens: null,
    ...(reasoning > 0
      ? { reasoning_output_tokens: reasoning, reasoning_token_source: 'events' as const }
      : {}),
  })
}

/** A request that thought 300 tokens without streaming them, then answered 3 events 10 ms apart from `firstAt`. */
function thoughtUnseen(firstAt: number, overrides: Partial<RequestRecord>): RequestRecord {
  return makeRecord({
    token_times: [firstAt, firstAt + 10, firstAt + 20],
    output_tokens: 303,
    first_reasoning_at: null,
    first_answer_at: firstAt,
    reasoning_tokens: 300,
    ...overrides,
  })
}

/** One level's summary of `records`, the client idle. */
function levelOf(records: RequestRecord[]): ReturnType<typeof summarizeLevel> {
  const client = { cpu_percent: 1, rss_mib: 1, loops: [] }
  return summarizeLevel(1, records, { percentiles: PERCENTILES, timeoutMs: 10_000, slos: [] }, client)
}

test('no request reasoned (or records of older versions): no reasoning figures', () => {
  assert.equal(reasoningFigures([makeRecord({ token_times: [100, 110, 120] })], PERCENTILES), null)
  assert.equal(reasoningFigures([reasoned(0, 0, 5)], PERCENTILES), null)
})

test('TTFR, TTFO, reasoning and answer tokens and answer TPOT over a level', () => {
  const figures = reasoningFigures(
    [reasoned(0, 20, 11), reasoned(1000, 40, 6), reasoned(2000, 0, 9)],
    PERCENTILES,
  )
  assert.ok(figures !== null)
  assert.equal(figures.requests_reasoning, 2)
  // TTFR only for those that reasoned; TTFO for every answer, the non-reasoning one's equal to its TTFT.
  assert.deepEqual([figures.ttfr_ms.count, figures.ttfr_ms.min, figures.ttfr_ms.max], [2, 100, 100])
  assert.deepEqual([figures.ttfo_ms.min, figures.ttfo_ms.max, figures.ttfo_ms.count], [100, 500, 3])
  assert.equal(figures.ttfo_ms.p50, 300)
  assert.deepEqual([figures.reasoning_tokens.min, figures.reasoning_tokens.max], [20, 40])
  assert.deepEqual([figures.answer_tokens.min, figures.answer_tokens.max], [6, 11])
  // Answer tokens 10 ms apart: the answer phase's TPOT is 10 ms whatever the thinking took.
  assert.deepEqual([figures.answer_tpot_ms.min, figures.answer_tpot_ms.max], [10, 10])
  assert.deepEqual(figures.reasoning_token_sources, { usage: 0, events: 2, tokenizer: 0 })
  assert.equal(figures.reasoning_hidden, 0)
  assert.deepEqual(reasoningNotes(figures), [])
})

test('usage counts reasoning tokens that never came as events: flagged as hidden, and noted on the level', () => {
  const hidden = thoughtUnseen(400, { reasoning_output_tokens: 300, reasoning_token_source: 'usage' })
  const figures = reasoningFigures([hidden], PERCENTILES)
  assert.ok(figures !== null)
  assert.equal(figures.reasoning_hidden, 1)
  assert.equal(figures.ttfr_ms.count, 0)
  assert.equal(figures.answer_tokens.p50, 3)
  const level = levelOf([hidden])
  assert.equal(level.reasoning?.reasoning_hidden, 1)
  assert.ok(level.notes?.some((note) => note.includes('TTFT includes the thinking')))
})

test('SLO keys on the reasoning phases parse, and an unknown metric is refused', () => {
  const lower = { better: 'lower' }
  assert.deepEqual(parseSloKey('ttfo_p95'), { metric: 'ttfo', percentile: 95, ...lower })
  assert.deepEqual(parseSloKey('ttfr_p50'), { metric: 'ttfr', percentile: 50, ...lower })
  assert.deepEqual(parseSloKey('answer_tpot_p99'), { metric: 'answer_tpot', percentile: 99, ...lower })
  // The older spelling, with _ms, still reads, and says the one it is now.
  assert.deepEqual(parseSloKey('ttfo_p95_ms'), {
    metric: 'ttfo',
    percentile: 95,
    ...lower,
    renamed: 'ttfo_p95',
  })
  assert.match(parseSloKey('ttfa_p95') as string, /ttfo/)
})

test('an SLO on TTFO judges the answer, not the thinking', () => {
  const records = [reasoned(0, 20, 11), reasoned(1000, 20, 11)]
  const slo = evaluateSlos(records, toSlos({ ttft_p95_ms: 150, ttfo_p95_ms: 150 }), 10_000, 1)
  const [ttft, ttfo] = slo.checks
  assert.deepEqual([ttft?.value_ms, ttft?.met], [100, true])
  assert.deepEqual([ttfo?.value_ms, ttfo?.met], [300, false])
  assert.equal(slo.meets, false)
  assert.equal(slo.good_share, 0)
})

test('usage with much hidden thinking is believed; the same count with streamed or no reasoning is not', () => {
  // 5000 tokens of thinking never streamed, then 100 answer tokens in 100 events.
  const hidden = makeRecord({
    token_times: Array.from({ length: 100 }, (_, i) => 100 + i),
    first_answer_at: 100,
    first_reasoning_at: null,
    reasoning_tokens: 5000,
    requested_output_tokens: 8000,
  })
  assert.equal(implausibleUsage(hidden, 5100, 100), null)
  const noReasoning = { ...hidden, reasoning_tokens: null }
  assert.match(implausibleUsage(noReasoning, 5100, 100) as string, /far from the 100 token events/)
  // A record of an older version (no first_answer_at) is judged as before.
  const older = { ...hidden, first_answer_at: undefined }
  assert.match(implausibleUsage(older, 5100, 100) as string, /far from/)
})

test("hidden reasoning is left out of the comparisons of TTFT with the server's own first token", () => {
  const timings = { prompt_n: 10, prompt_ms: 20, predicted_n: 303, predicted_ms: 3000, cache_n: 0 }
  const shown = reasoned(0, 20, 11)
  shown.server_timings = timings
  const hidden = thoughtUnseen(3000, { server_timings: timings })
  // The queue before the engine (TTFT - prefill) is 80 ms for the request whose thinking streamed;
  // the hidden one's TTFT of 3000 ms is mostly thinking, not queue.
  const inBand = inBandFigures([shown, hidden], PERCENTILES)
  assert.deepEqual([inBand?.queue_ms.count, inBand?.queue_ms.p50], [1, 80])
  const level = levelOf([hidden])
  assert.equal(level.ttft_ms.p50, 3000)
  assert.equal(serverViewOf(level).client_ttft_p50_ms, null)
  assert.equal(serverViewOf({ ...level, reasoning: undefined }).client_ttft_p50_ms, 3000)
  // TPOT: the 2 gaps after the first event over the 2 answer tokens after it, not over 302 tokens.
  assert.equal(level.tpot_ms.p50, 10)
})

test("a probe's line names the reasoning: tokens, source, TTFO, or that no answer came", () => {
  assert.equal(reasoningPhrase(reasoned(0, 0, 5)), '')
  assert.equal(reasoningPhrase(reasoned(0, 20, 11)), '; reasoning 20 tokens (events), TTFO 300 ms')
  const cut = reasoned(0, 4, 0)
  assert.equal(reasoningPhrase(cut), '; reasoning 4 tokens (events), no answer token yet')
  const hidden = makeRecord({
    token_times: [400, 410],
    first_reasoning_at: null,
    first_answer_at: 400,
    reasoning_tokens: 9,
  })
  assert.equal(reasoningPhrase(hidden), '; reasoning 9 tokens (usage, not streamed), TTFO 400 ms')
})
