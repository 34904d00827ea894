import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { speculativeFigures, stepSizes } from '../../src/metrics/speculative.js'
import { readInBand } from '../../src/protocols/in-band.js'
import type { RequestRecord } from '../../src/records/types.js'
import { renderMarkdown } from '../../src/report/markdown.js'
import { renderTable } from '../../src/report/terminal.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { draftPlan, positionAcceptance } from '../../src/sim/draft-model.js'
import { makeRecord } from '../helpers/records.js'

const PERCENTILES = [50, 90]

/** Event times of steps of these sizes, `stepMs` apart, the events of a step `burstMs` apart; a prefill token first. */
function cadence(sizes: readonly number[], stepMs = 10, burstMs = 0.15): number[] {
  const times = [0]
  sizes.forEach((size, step) => {
    for (let i = 0; i < size; i++) times.push(20 + step * stepMs + i * burstMs)
  })
  return times
}

test('bursts a fraction of a ms apart are one step: sizes, histogram, length and rate', () => {
  assert.deepEqual(stepSizes(cadence([1, 3, 5, 2])).sizes, [1, 3, 5, 2])
  const records = [
    makeRecord({ token_times: cadence([1, 3, 5, 2]) }),
    makeRecord({ token_times: cadence([2, 2]) }),
  ]
  const cadenceFigures = speculativeFigures(records, PERCENTILES)?.cadence
  assert.ok(cadenceFigures)
  assert.equal(cadenceFigures.steps, 6)
  assert.equal(cadenceFigures.tokens, 15)
  assert.equal(cadenceFigures.acceptance_length, 2.5)
  assert.deepEqual(cadenceFigures.steps_by_tokens, { '1': 1, '2': 3, '3': 1, '5': 1 })
  assert.equal(cadenceFigures.longest_step, 5)
  // 9 accepted drafts over 6 steps of 4 drafted each.
  assert.equal(cadenceFigures.draft_acceptance_rate, 0.375)
  assert.equal(cadenceFigures.tells, true)
  // First request: 30 ms from its first step to its last, 10 tokens in the later steps; second: 10 ms, 2 tokens.
  assert.equal(cadenceFigures.step_ms.count, 2)
  assert.equal(cadenceFigures.tpot_per_accepted_token_ms.min, 3)
  assert.equal(cadenceFigures.tpot_per_accepted_token_ms.max, 5)
})

test('one token per event at a steady pace: length 1, and the cadence says it cannot tell', () => {
  const figures = speculativeFigures([makeRecord({ token_times: cadence([1, 1, 1, 1, 1]) })], PERCENTILES)
  assert.equal(figures?.cadence?.acceptance_length, 1)
  assert.equal(figures?.cadence?.draft_acceptance_rate, null)
  assert.equal(figures?.cadence?.tells, false)
  assert.match(figures?.cadence?.why ?? '', /every step one token/)
})

test('a few bursts are under the floor: hold-ups, a token a step', () => {
  // One burst of 2 in 40 steps (2.5%).
  const few = speculativeFigures(
    [makeRecord({ token_times: cadence([...Array(39).fill(1), 2]) })],
    PERCENTILES,
  )
  assert.equal(few?.cadence?.acceptance_length, 1)
  assert.deepEqual(few?.cadence?.steps_by_tokens, { '1': 41 })
  assert.equal(few?.cadence?.held_bursts, 1)
  assert.equal(few?.cadence?.tells, false)
  assert.match(few?.cadence?.why ?? '', /under the 5%/)
})

test('steps under 4 ms apart cannot be told from bursts; events of several tokens are left to tokens per event', () => {
  const close = speculativeFigures([makeRecord({ token_times: cadence([2, 1, 2, 1], 2) })], PERCENTILES)
  assert.equal(close?.cadence?.tells, false)
  assert.match(close?.cadence?.why ?? '', /too close/)
  const multi = speculativeFigures([makeRecord({ token_times: [0, 10, 20], output_tokens: 9 })], PERCENTILES)
  assert.equal(multi?.cadence ?? null, null)
})

test("the engine's word: llama.cpp's timings draft counts and SGLang's meta_info, read and summed", () => {
  const llama = readInBand({
    timings: {
      prompt_n: 4,
      prompt_ms: 2,
      predicted_n: 16,
      predicted_ms: 40,
      draft_n: 12,
      draft_n_accepted: 9,
    },
  })
  const sglang = readInBand({
    meta_info: { spec_verify_ct: 4, spec_accept_rate: 0.5, spec_accept_length: 3.5 },
  })
  assert.deepEqual(llama?.speculation, {
    draft_tokens: 12,
    accepted_tokens: 9,
    steps: null,
    accept_length: null,
    accept_rate: null,
  })
  assert.equal(readInBand({ timings: { prompt_ms: 1, predicted_ms: 2 } })?.speculation, undefined)
  const withLlama = makeRecord({
    token_times: cadence([1, 1]),
    output_tokens: 16,
    chunks: 3,
    server_timings: llama?.timings ?? null,
    ...(llama?.speculation === undefined ? {} : { server_speculation: llama.speculation }),
  })
  const server = speculativeFigures([withLlama], PERCENTILES)?.server
  // 16 tokens from 16 - 9 = 7 target passes.
  assert.deepEqual(server, {
    requests: 1,
    draft_tokens: 12,
    accepted_tokens: 9,
    acceptance_rate: 0.75,
    acceptance_length: 2.286,
  })
  const withSglang: RequestRecord = makeRecord({ token_times: [0, 5], output_tokens: 14, chunks: 2 })
  if (sglang?.speculation !== undefined) withSglang.server_speculation = sglang.speculation
  const sglangFigures = speculativeFigures([withSglang], PERCENTILES)?.server
  assert.equal(sglangFigures?.acceptance_rate, 0.5)
  assert.equal(sglangFigures?.acceptance_length, 3.5)
})

test("the simulator's draft plan: the per-position chance gives the set rate, and the plan adds up", () => {
  for (const rate of [0.2, 0.5, 0.8]) {
    const a = positionAcceptance(rate, 4)
    assert.ok(Math.abs((a + a ** 2 + a ** 3 + a ** 4) / 4 - rate) < 1e-9)
  }
  let state = 1
  const random = () => {
    state = (state * 48_271) % 2_147_483_647
    return state / 2_147_483_647
  }
  const plan = draftPlan({ acceptance: 0.6, max: 4 }, 20_000, random)
  assert.equal(
    plan.steps.reduce((a, b) => a + b, 0),
    20_000,
  )
  assert.equal(plan.steps[0], 1)
  assert.ok(Math.abs(plan.accepted / plan.drafted - 0.6) < 0.02, `${plan.accepted / plan.drafted}`)
})

test('a recorded llama.cpp stream with a draft model (-md, --draft-max 4): bursts, length above 1', () => {
  const recorded = JSON.parse(
    readFileSync(new URL('../fixtures/speculative/llamacpp-draft-token-times.json', import.meta.url), 'utf8'),
  ) as { with_draft: number[][]; without_draft: number[][] }
  const figuresOf = (runs: number[][]) =>
    speculativeFigures(
      runs.map((times) => makeRecord({ token_times: times })),
      PERCENTILES,
    )?.cadence
  const draft = figuresOf(recorded.with_draft)
  const plain = figuresOf(recorded.without_draft)
  assert.ok(draft && plain)
  assert.ok(draft.acceptance_length > 1, `with the draft: ${draft.acceptance_length}`)
  assert.equal(draft.tells, true)
  assert.equal(plain.acceptance_length, 1)
  assert.equal(plain.tells, false)
})

test('the reports show speculation where a level has it, a dash on the levels without', () => {
  const result = JSON.parse(
    readFileSync(new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url), 'utf8'),
  ) as BenchResult
  assert.ok(!renderMarkdown(result).includes('accept len'), 'nothing without speculation')
  const first = result.levels[0]
  assert.ok(first?.speculative?.cadence)
  first.speculative.cadence = {
    ...first.speculative.cadence,
    acceptance_length: 1.5,
    steps_by_tokens: { '1': 10, '2': 10 },
    tells: true,
  }
  first.acceptance_length = 1.5
  const markdown = renderMarkdown(result)
  assert.match(markdown, /\| accept len \|/)
  // The engine said nothing of drafts here: the cadence's figure is shown as unconfirmed.
  assert.match(markdown, /\| client cadence, unconfirmed \(the engine reports no drafts; [^|]*\| 1\.50 \|/)
  assert.match(markdown, /1: 10, 2: 10/)
  assert.equal(markdown.match(/\| client cadence/g)?.length, 1, 'one level has it')
  assert.match(renderTable(result, { width: 400 }), /accept/)
})
