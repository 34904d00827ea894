import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pairedInconclusiveReason } from '../../src/analysis/client-trust.js'
import { compareRuns, DEFAULT_MAX_REGRESSION } from '../../src/compare/compare.js'
import { pairedSides } from '../../src/compare/paired-sides.js'
import type { ClientHealth } from '../../src/metrics/client-health.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import { renderComparison } from '../../src/report/compare-render.js'
import { pairRatioLines } from '../../src/report/pair-ratios.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

/**
 * Issue 38: a --paired run has one client for both targets. A level where it was client-bound is
 * inconclusive with a reason that names the paired mode and says both targets shared the client
 * (not "base run" and "new run": there was one run), and the Markdown shows the pairs over time.
 */
const STREAMS = 2
const TOKENS = 20
const PAIRS = 4

/** One block of one target: STREAMS closed-loop streams of `perStream` requests of about `e2eMs` each, from `start`. */
function block(
  random: () => number,
  target: 0 | 1,
  pair: number,
  start: number,
  e2eMs: number,
): RequestRecord[] {
  const records: RequestRecord[] = []
  for (let stream = 0; stream < STREAMS; stream++) {
    let clock = start + stream
    for (let i = 0; i < 8; i++) {
      const e2e = e2eMs * (0.9 + 0.2 * random())
      records.push(
        makeRecord({
          seq: i,
          worker: stream,
          level: STREAMS,
          sent_at: clock,
          token_times: Array.from({ length: TOKENS }, (_, k) => clock + (e2e * (k + 1)) / TOKENS),
          target: { endpoint: target, model: 0 },
          pair,
        }),
      )
      clock += e2e
    }
  }
  return records
}

/** A paired run's records: both targets' blocks of each pair in the same seconds (together), B `slower` times A. */
function pairedRecords(slower: number): RequestRecord[] {
  const random = seededRandom(7)
  return Array.from({ length: PAIRS }, (_, pair) => [
    ...block(random, 0, pair, pair * 2000, 100),
    ...block(random, 1, pair, pair * 2000, 100 * slower),
  ]).flat()
}

function meta(mode: 'interleave' | 'together'): RunMeta {
  return {
    target: { model: 'm', base_url: 'http://a', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 8, output_tokens: TOKENS, stream: true },
    load: { mode: 'concurrency', levels: [STREAMS], warmup_requests: 0, requests_per_level: 64 },
    percentiles: [50, 95],
    levels_run: [{ value: STREAMS }],
    split: {
      endpoints: [{ base_url: 'http://a' }, { base_url: 'http://b' }],
      models: ['m'],
      paired: true,
      ...(mode === 'together' ? { paired_mode: 'together' } : {}),
    },
  } as unknown as RunMeta
}

const BOUND: ClientHealth = {
  bound: true,
  reasons: ['CPU 97%'],
  notes: [],
  noisy: false,
} as unknown as ClientHealth

function judged(mode: 'interleave' | 'together', slower: number, client: ClientHealth | null) {
  const sides = pairedSides({
    meta: meta(mode),
    records: pairedRecords(slower),
    ...(client === null ? {} : { levels: [{ value: STREAMS, client }] }),
  })
  assert.ok(sides !== null, 'a paired run')
  return compareRuns(sides.base, sides.next, DEFAULT_MAX_REGRESSION, { paired: true, pairedMode: mode })
}

test('paired client trust: the reason names the mode and says both targets shared the one client', () => {
  assert.equal(pairedInconclusiveReason(undefined, 'together'), null)
  const together = pairedInconclusiveReason(BOUND, 'together') ?? ''
  assert.match(together, /^client-bound \(CPU 97%\), with A and B loaded together \(--paired-mode together\)/)
  assert.match(together, /both targets shared this one client at the same time/)
  const interleave = pairedInconclusiveReason(BOUND, 'interleave') ?? ''
  assert.match(interleave, /--paired-mode interleave/)
  assert.match(interleave, /A and B took turns on this one client/)
  assert.doesNotMatch(`${together} ${interleave}`, /(base|new) run/)
})

test('paired together: a client-bound level is inconclusive, said once with the mode; a healthy one catches B 30% slower', () => {
  const bound = judged('together', 1.3, BOUND)
  assert.equal(bound.outcome, 'inconclusive', JSON.stringify(bound.regressions))
  assert.equal(bound.basis.kind, 'paired')
  assert.equal(bound.basis.kind === 'paired' ? bound.basis.mode : null, 'together')
  assert.match(bound.levels[0]?.inconclusive ?? '', /--paired-mode together\): both targets shared/)
  const text = renderComparison(bound)
  assert.match(text, /- c=2: client-bound \(CPU 97%\), with A and B loaded together/)
  assert.match(text, /Basis: paired blocks, loaded together/)
  const healthy = judged('together', 1.3, null)
  assert.equal(healthy.outcome, 'regression', JSON.stringify(healthy.levels[0]?.metrics))
  assert.ok(healthy.regressions.some((r) => r.metric === 'e2e_p50' && r.change > 0.2))
})

test('paired: the Markdown shows each gated figure B/A per pair in time order, as the terminal lines do', () => {
  const comparison = judged('interleave', 1.3, null)
  const text = renderComparison(comparison)
  assert.match(text, /\*\*Pairs over time: B\/A of each gated figure, pair by pair in time order\.\*\*/)
  const pairsTable = text.slice(text.indexOf('| level | figure | pair 1 |'))
  const row = /^\| 2 \| e2e_p50 \| (.+) \|$/m.exec(pairsTable)
  assert.ok(row !== null, text)
  const ratios = (row[1] as string).split(' | ').map(Number)
  assert.equal(ratios.length, PAIRS, pairsTable)
  // Every pair's B took ~30% longer than its A (the blocks' jitter is ±10%).
  for (const ratio of ratios) assert.ok(ratio > 1.1 && ratio < 1.5, String(ratios))
  // The same figures as the terminal's line for that figure.
  const line = pairRatioLines(comparison).find((l) => l.startsWith('level 2 e2e_p50 '))
  assert.equal(line, `level 2 e2e_p50 B/A by pair: ${(row[1] as string).split(' | ').join(' ')}`)
  // Left out where the caller prints its own lines (the gate), and absent from a two-run comparison.
  assert.doesNotMatch(renderComparison(comparison, false, false), /Pairs over time/)
  const sides = pairedSides({ meta: meta('interleave'), records: pairedRecords(1) })
  assert.ok(sides !== null)
  assert.doesNotMatch(
    renderComparison(compareRuns(sides.base, sides.next, DEFAULT_MAX_REGRESSION)),
    /Pairs over time/,
  )
})
