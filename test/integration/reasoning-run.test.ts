// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { TIMING_FIGURES, tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

/**
 * The simulator is told: 40 ms to the first token, then one token every 15 ms whatever the batch,
 * and the first 10 of each response's 30 tokens are reasoning. So the first reasoning token comes at
 * about 40 ms and the first answer token 10 decode steps later, about 190 ms. Tolerances as in
 * run-simulator.test.ts (timers late by a few ms on a busy machine); the answer's 20 tokens keep one
 * late token from moving its TPOT much.
 */
const PREFILL_MS = 40
const STEP_MS = 15
const REASONING = 10
const OUTPUT = 30

async function runWithReasoning(
  args: string[],
  slo: Record<string, number>,
): Promise<{ result: BenchResult; out: string }> {
  const sim = await startSimulatorProcess(
    {
      slots: 8,
      prefill_base_ms: PREFILL_MS,
      prefill_ms_per_token: 0,
      decode_base_ms: STEP_MS,
      decode_ms_per_seq: 0,
    },
    { args },
  )
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1, 4],
      requests: 8,
      output_tokens: OUTPUT,
      warmup: 1,
      out_dir: out,
      ...TIMING_FIGURES,
    })
    config.metrics.slo = slo
    return { result: await runToResult(config, out), out }
  } finally {
    await sim.close()
  }
}

function reasoningOf(level: LevelSummary): NonNullable<LevelSummary['reasoning']> {
  assert.ok(level.reasoning !== undefined, `level ${level.value} has reasoning figures`)
  return level.reasoning
}

test('a run against the simulator with a reasoning phase: TTFR before TTFO by the thinking, counts from usage, an SLO on TTFO', {
  timeout: 90_000,
}, async () => {
  // TTFT (the thinking's first token, ~40 ms) meets 100 ms; TTFO (~190 ms) does not: the SLO is on the answer.
  const { result, out } = await runWithReasoning(['--reasoning-tokens', String(REASONING)], {
    ttft_p50_ms: 100,
    ttfo_p50_ms: 100,
  })
  for (const level of result.levels) {
    assert.equal(level.ok, 8)
    const reasoning = reasoningOf(level)
    assert.equal(reasoning.requests_reasoning, 8)
    assert.equal(reasoning.reasoning_hidden, 0)
    assert.deepEqual(reasoning.reasoning_token_sources, { usage: 8, events: 0, tokenizer: 0 })
    assert.equal(reasoning.reasoning_tokens.min, REASONING)
    assert.equal(reasoning.reasoning_tokens.max, REASONING)
    assert.equal(reasoning.answer_tokens.min, OUTPUT - REASONING)
    assert.equal(reasoning.answer_tokens.max, OUTPUT - REASONING)
    // TTFR is TTFT here (the first event is reasoning); TTFO comes REASONING steps later.
    assert.deepEqual(reasoning.ttfr_ms, level.ttft_ms)
    const ttfr = reasoning.ttfr_ms.p50 as number
    const ttfo = reasoning.ttfo_ms.p50 as number
    assert.ok(ttfr >= PREFILL_MS - 2 && ttfr <= PREFILL_MS + 15, `TTFR p50 ${ttfr}`)
    // A first token sent or read late on a busy host shortens the gap by as much (the later steps
    // keep their schedule): one step of slack below, as a CI host once gave 145 ms for 150.
    const thinking = ttfo - ttfr
    assert.ok(
      thinking >= (REASONING - 1) * STEP_MS && thinking <= REASONING * STEP_MS + 15,
      `TTFO - TTFR ${thinking} ms for ${REASONING} steps of ${STEP_MS} ms`,
    )
    const answerTpot = reasoning.answer_tpot_ms.mean as number
    assert.ok(answerTpot >= STEP_MS - 1.5 && answerTpot <= STEP_MS + 4, `answer TPOT ${answerTpot}`)
    const checks = Object.fromEntries((level.slo?.checks ?? []).map((check) => [check.key, check]))
    assert.equal(checks.ttft_p50_ms?.met, true, JSON.stringify(checks))
    assert.equal(checks.ttfo_p50_ms?.met, false, JSON.stringify(checks))
    assert.equal(
      checks.ttfo_p50_ms?.value_ms,
      reasoning.ttfo_ms.p50,
      'every request ok: error-adjusted = plain',
    )
  }
  assert.equal(result.capacity, null, 'no level meets the TTFO objective')
  assert.match(result.definitions.reasoning ?? '', /time_to_first_output/)

  const { records } = readRecords(join(out, 'requests.jsonl'))
  const measured = records.filter((record) => record.phase === 'measure')
  assert.equal(measured.length, 16)
  for (const record of measured) {
    assert.equal(record.reasoning_events, REASONING)
    assert.equal(record.reasoning_tokens, REASONING)
    assert.equal(record.reasoning_output_tokens, REASONING)
    assert.equal(record.reasoning_token_source, 'usage')
    assert.equal(record.first_token_at, record.first_reasoning_at)
    assert.ok((record.first_reasoning_at as number) < (record.first_answer_at as number))
    assert.equal('reasoning_text' in record, false, 'the transient text is never written')
  }
  const summary = readFileSync(join(out, 'summary.md'), 'utf8')
  assert.match(summary, /TTFO ms \(answer\)/)
})

test('the simulator hiding its reasoning: no reasoning event, usage counts it, TTFT includes the thinking, flagged', {
  timeout: 90_000,
}, async () => {
  const { result, out } = await runWithReasoning(
    ['--reasoning-tokens', String(REASONING), '--hide-reasoning'],
    { ttfo_p95_ms: 10_000 },
  )
  for (const level of result.levels) {
    const reasoning = reasoningOf(level)
    assert.equal(reasoning.reasoning_hidden, 8)
    assert.equal(reasoning.ttfr_ms.count, 0, 'no reasoning event to time')
    assert.deepEqual(reasoning.ttfo_ms, level.ttft_ms, 'the first event is the answer')
    assert.deepEqual(reasoning.reasoning_token_sources, { usage: 8, events: 0, tokenizer: 0 })
    assert.equal(reasoning.answer_tokens.p50, OUTPUT - REASONING)
    // The thinking came before the first event: TPOT counts only the tokens after it, as answer TPOT does.
    assert.deepEqual(level.tpot_ms, reasoning.answer_tpot_ms)
    const tpot = level.tpot_ms.mean as number
    assert.ok(tpot >= STEP_MS - 1.5 && tpot <= STEP_MS + 4, `TPOT ${tpot}`)
    // The hidden thinking still took its decode steps before the first event.
    const ttft = level.ttft_ms.min as number
    assert.ok(ttft >= PREFILL_MS + REASONING * STEP_MS - 3, `TTFT min ${ttft} includes the thinking`)
    assert.ok(
      (level.notes ?? []).some((note) => note.startsWith('reasoning hidden by the server')),
      JSON.stringify(level.notes),
    )
    assert.equal(level.slo?.meets, true)
    // What arrived is compared with what was streamed: no multi-token-event note, tokenizer = usage.
    assert.equal(level.events?.tokens_per_event, 1)
    assert.equal(level.token_counting.tokenizer_vs_usage_percent, 0)
    assert.equal(level.token_counting.usage_rejected, 0)
  }
  assert.equal(result.capacity?.value, 4)
  const { records } = readRecords(join(out, 'requests.jsonl'))
  for (const record of records.filter((r) => r.phase === 'measure')) {
    assert.equal(record.first_reasoning_at, null)
    assert.equal(record.reasoning_events, undefined)
    assert.equal(record.chunks, OUTPUT - REASONING)
    assert.equal(record.output_tokens, OUTPUT)
  }
})
