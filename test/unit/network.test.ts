import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runAdvice } from '../../src/analysis/advice.js'
import { describeRoundTrip, runRoundTrip } from '../../src/analysis/network.js'
import { networkFigures } from '../../src/metrics/network-figures.js'
import { makeRecord as record } from '../helpers/records.js'

/** A level's figures as runRoundTrip reads them: the least TTFT − prefill, the least TCP connect. */
function level(queueMin: number | null, connectMin: number | null = null) {
  const distribution = (min: number) => ({ count: 1, mean: min, min, max: min })
  return {
    in_band: queueMin === null ? undefined : ({ queue_ms: distribution(queueMin) } as never),
    network: connectMin === null ? undefined : { connect_ms: distribution(connectMin) },
  }
}

test("the run's round trip: the least TTFT − server prefill over every level, where the engine reports its time", () => {
  // c=1 saw 41 ms at least; at c=8 every request queued, yet one found a free slot at 40.5 ms.
  const trip = runRoundTrip([level(41, 0.2), level(40.5, 0.3), level(300, 0.2)])
  assert.deepEqual(trip, { ms: 40.5, source: 'first-byte' })
  assert.equal(
    describeRoundTrip(trip as NonNullable<typeof trip>),
    '41 ms round trip (the least client TTFT − server prefill)',
  )
  // No stream timings: the TCP handshakes say it.
  assert.deepEqual(runRoundTrip([level(null, 38.2), level(null, 39)]), { ms: 38.2, source: 'connect' })
  assert.equal(runRoundTrip([level(null), level(null)]), null)
  // A server whose prompt_ms covers more than its prefill makes TTFT − prefill negative: not a network.
  assert.deepEqual(runRoundTrip([level(-3)]), { ms: 0, source: 'first-byte' })
})

test('levels[].network: the TCP connects of the connections opened, none on reused ones', () => {
  const opened = [12.5, 11, 13].map((connect_ms) => ({ ...record({ connection: 'new' }), connect_ms }))
  const reused = record({ connection: 'reused' })
  const figures = networkFigures([...opened, reused], [50])
  assert.equal(figures?.connect_ms.count, 3)
  assert.equal(figures?.connect_ms.min, 11)
  assert.equal(figures?.connect_ms.p50, 12.5)
  assert.equal(networkFigures([reused], [50]), null)
})

const KNEE_ON_SLOTS = { value: 4, mode: 'concurrency', reason: '' } as never
const LEVELS = [
  { value: 2, verdict: 'healthy' },
  { value: 4, verdict: 'saturated' },
  { value: 5, verdict: 'saturated' },
] as never

test("run advice on a knee at the declared slots names the engine's own flag for them", () => {
  const llama = runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 4, engine: 'llama.cpp' })
  assert.match(llama[0] ?? '', /the knee is the server's 4 slots: .*llama\.cpp --parallel/)
  assert.doesNotMatch(llama.join('\n'), /vLLM|--max-num-seqs|--enable-chunked-prefill/)
  const vllm = runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 4, engine: 'vllm' })
  assert.match(vllm[0] ?? '', /vLLM --max-num-seqs/)
  assert.doesNotMatch(vllm.join('\n'), /--parallel|llama\.cpp/)
  const sglang = runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 4, engine: 'sglang' })
  assert.match(sglang[0] ?? '', /SGLang --max-running-requests/)
  const tgi = runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 4, engine: 'tgi' })
  assert.match(tgi[0] ?? '', /TGI --max-batch-total-tokens/)
  const unknown = runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 4, engine: null })
  assert.match(unknown[0] ?? '', /vLLM --max-num-seqs, SGLang --max-running-requests, llama\.cpp --parallel/)
  // A knee off the slots, or slots not declared: no such advice.
  assert.equal(runAdvice(LEVELS, KNEE_ON_SLOTS, 128, { slots: 6, engine: 'llama.cpp' }).length, 0)
  assert.equal(runAdvice(LEVELS, KNEE_ON_SLOTS, 128, null).length, 0)
})
