import assert from 'node:assert/strict'
import { test } from 'node:test'
import { summarizeSamples } from '../../src/metrics/distribution.js'
import { eventFigures } from '../../src/metrics/event-figures.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

const PERCENTILES = [50, 95, 99]

/** Gaps between a record's events, as the level's ITL sample holds them. */
function gapsOf(records: readonly RequestRecord[]): number[] {
  return records.flatMap((record) =>
    record.token_times.slice(1).map((at, i) => at - (record.token_times[i] as number)),
  )
}

test('one token per event: the per-token ITL is the ITL, whether reused or sorted again', () => {
  const records = [
    makeRecord({ token_times: [10, 12, 15, 21] }),
    makeRecord({ token_times: [5, 6, 9] }),
    makeRecord({ token_times: [] }),
  ]
  const itl = summarizeSamples(gapsOf(records), PERCENTILES)
  const reused = eventFigures(records, PERCENTILES, itl)
  const sorted = eventFigures(records, PERCENTILES)
  assert.deepEqual(reused.itl_per_token_ms, itl)
  assert.deepEqual(sorted.itl_per_token_ms, itl)
  assert.notEqual(reused.itl_per_token_ms, itl, 'a copy: the two figures are separate objects in the result')
})

test('events of two tokens: each gap is per token, never the ITL handed in', () => {
  const records = [
    makeRecord({ token_times: [0, 10, 20], output_tokens: 6 }),
    makeRecord({ token_times: [0, 4] }),
  ]
  const itl = summarizeSamples(gapsOf(records), PERCENTILES)
  const figures = eventFigures(records, PERCENTILES, itl)
  // The first request's gaps of 10 ms carried 2 tokens each: 5 ms per token; the second's 4 ms, 1 token.
  assert.deepEqual(figures.itl_per_token_ms, summarizeSamples([5, 5, 4], PERCENTILES))
  assert.equal(figures.tokens_per_event, 1.6)
})

test('a request whose events are in the ITL but not spread over tokens keeps the samples apart', () => {
  // Usage said 0 tokens: its gap is in the level's ITL, not in the per-token sample.
  const records = [makeRecord({ token_times: [0, 3] }), makeRecord({ token_times: [0, 7], output_tokens: 0 })]
  const itl = summarizeSamples(gapsOf(records), PERCENTILES)
  assert.deepEqual(
    eventFigures(records, PERCENTILES, itl).itl_per_token_ms,
    summarizeSamples([3], PERCENTILES),
  )
})
