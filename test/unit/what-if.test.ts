import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { CapacityModel, FittedParameter } from '../../src/model/capacity-model.js'
import { renderHtml } from '../../src/report/html.js'
import { renderMarkdown } from '../../src/report/markdown.js'
import { modelFitChart } from '../../src/report/model-fit-chart.js'
import { KNEES_NOT_PREDICTED, whatIf, workloadRows } from '../../src/report/what-if.js'
import type { BenchResult } from '../../src/result/bench-result.js'

const fitted = (value: number, spread: number): FittedParameter => ({
  value,
  low: value * (1 - spread),
  high: value * (1 + spread),
  measured: true,
  basis: 'a test fit',
})

/** A server of 8 slots whose prefill costs 0.2 ms a prompt token, as fitted on 1, 2, 4, 8, 16 streams. */
function model(levels: number[] = [1, 2, 4, 8, 16]): CapacityModel {
  return {
    parameters: {
      slots: { value: 8, low: 8, high: 8, measured: true, basis: 'the server’s own description' },
      prefill_base_ms: fitted(20, 0.05),
      prefill_ms_per_token: fitted(0.2, 0.05),
      decode_base_ms: fitted(10, 0.05),
      decode_ms_per_seq: fitted(1, 0.1),
      prefill_blocks_decode: { value: 0, low: null, high: null, measured: true, basis: 'a test choice' },
      kv_cache_tokens: null,
    },
    fitted_on: { input_tokens: 256, output_tokens: 64, levels },
    reproduction: {
      levels: [
        { level: 1, measured_tokens_per_s: 80, predicted_tokens_per_s: 82, error: 0.025 },
        { level: 8, measured_tokens_per_s: 430, predicted_tokens_per_s: 420, error: -0.0233 },
      ],
      max_error: 0.025,
    },
    notes: ['a note of the fit'],
  }
}

/** What the "What if" rows read of a result: its model, the server's word and the load's mode. */
function result(
  m: CapacityModel,
  server: { context_per_slot: number | null; max_model_len: number | null } | null = null,
): BenchResult {
  return {
    model: m,
    meta: {
      server: server === null ? null : { engine: null, slots: 8, answered: [], ...server },
      load: { mode: 'concurrency', levels: m.fitted_on.levels },
    },
  } as unknown as BenchResult
}

test('a longer prompt predicts a lower or equal throughput at the knee, and its interval holds the point', () => {
  const { rows } = workloadRows(result(model()), model(), [
    { input_tokens: 128, output_tokens: 256 },
    { input_tokens: 1024, output_tokens: 256 },
    { input_tokens: 4096, output_tokens: 256 },
  ])
  const throughputs = rows.map((row) => {
    assert.equal(row.skipped, null)
    assert.equal(row.knee?.value, 8, 'the knee is at the 8 slots, whatever the prompt')
    const t = row.throughput
    assert.ok(t !== null && t.low <= t.value && t.value <= t.high, JSON.stringify(t))
    return t.value
  })
  for (let i = 1; i < throughputs.length; i++)
    assert.ok(
      (throughputs[i] as number) <= (throughputs[i - 1] as number),
      `longer prompts, more throughput: ${throughputs.join(', ')}`,
    )
  assert.ok((throughputs.at(-1) as number) < (throughputs[0] as number) * 0.95, 'a 4096-token prompt costs')
})

test('a workload that overflows the server’s context is skipped with the reason; one that fits is not', () => {
  const m = model()
  const workloads = [
    { input_tokens: 512, output_tokens: 256 },
    { input_tokens: 2048, output_tokens: 256 },
  ]
  const perSlot = workloadRows(result(m, { context_per_slot: 1024, max_model_len: null }), m, workloads).rows
  assert.equal(perSlot[0]?.skipped, null)
  assert.match(
    perSlot[1]?.skipped ?? '',
    /2048 \+ 256 tokens do not fit the server's 1024 tokens of context per slot/,
  )
  assert.equal(perSlot[1]?.throughput, null)
  const vllm = workloadRows(result(m, { context_per_slot: null, max_model_len: 2048 }), m, workloads).rows
  assert.match(vllm[1]?.skipped ?? '', /2048 \+ 256 tokens do not fit the server's 2048 max_model_len/)
  const tables = whatIf(result(m, { context_per_slot: 1024, max_model_len: null }), workloads)?.tables ?? []
  const knees = tables.find((table) => table.title.startsWith('Predicted knee'))
  assert.deepEqual(knees?.rows[1]?.slice(0, 3), ['2048 / 256', '–', '–'])
  assert.match(knees?.rows[1]?.[3] ?? '', /^skipped: /)
})

test('the knee is looked for past the levels run, a few doublings, when it is not inside them', () => {
  const m = model([1, 2])
  const [row] = workloadRows(result(m), m, [{ input_tokens: 128, output_tokens: 128 }]).rows
  assert.deepEqual(row?.levels, [1, 2, 4, 8, 16, 32])
  assert.equal(row?.knee?.value, 8)
})

test('the parameters, the reproduced levels and the notes are shown; no model, no section', () => {
  const section = whatIf(result(model()))
  assert.ok(section !== null)
  const [parameters, fit] = section.tables
  assert.deepEqual(parameters?.rows[2], [
    'prefill per prompt token (ms)',
    '0.2',
    '0.19–0.21',
    'measured',
    'a test fit',
  ])
  assert.equal(parameters?.rows.length, 6, 'no KV cache row when the server did not say it')
  assert.deepEqual(fit?.rows, [
    ['1', '80', '82', '+2.5%'],
    ['8', '430', '420', '-2.3%'],
  ])
  assert.match(fit?.title ?? '', /largest error 2\.5%/)
  assert.ok(section.notes.includes('a note of the fit'))
  assert.equal(whatIf({ meta: {} } as unknown as BenchResult), null)
})

test('summary.md and report.html show the stored llama run’s "What if", with the model’s line over the measured points', async () => {
  const path = fileURLToPath(
    new URL('../fixtures/rendered/llama/expected/bench_result.json', import.meta.url),
  )
  const stored = JSON.parse(readFileSync(path, 'utf8')) as BenchResult
  assert.ok(stored.model !== undefined, 'the stored result carries a model')
  const markdown = renderMarkdown(stored)
  assert.match(markdown, /\n## What if\n/)
  assert.match(markdown, /\| 2048 \/ 256 \| – \| – \| skipped: 2048 \+ 256 tokens do not fit/)
  const chart = await modelFitChart(stored)
  assert.ok(chart !== null)
  assert.equal(chart.points, 2 * stored.model.reproduction.levels.length)
  assert.equal(chart.svg, (await modelFitChart(stored))?.svg, 'drawn the same each time')
  const html = renderHtml(stored, [], [], chart)
  assert.match(html, /<h2>What if<\/h2>/)
  assert.match(html, /<figure class="model-fit"[^>]*><svg/)
  const { model: _, ...without } = stored
  assert.ok(!renderHtml(without as BenchResult, []).includes('What if'))
  assert.ok(!renderMarkdown(without as BenchResult).includes('What if'))
})

test('a run’s own report (predictKnees false) keeps the fitted model and its reproduction, predicts no knee, and says where to get them', async () => {
  const path = fileURLToPath(
    new URL('../fixtures/rendered/llama/expected/bench_result.json', import.meta.url),
  )
  const stored = JSON.parse(readFileSync(path, 'utf8')) as BenchResult
  const markdown = renderMarkdown(stored, false)
  assert.match(markdown, /\n## What if\n/)
  assert.match(markdown, /\*\*Fitted parameters:\*\*/)
  assert.ok(!markdown.includes('Predicted knee of other workloads'))
  assert.ok(markdown.includes(cellText(KNEES_NOT_PREDICTED)))
  const html = renderHtml(stored, [], [], await modelFitChart(stored), false)
  assert.match(html, /<figure class="model-fit"/)
  assert.ok(!html.includes('Predicted knee of other workloads'))
  assert.ok(renderMarkdown(stored).includes('Predicted knee of other workloads'), 'report draws them')
})

/** As summary.md writes outside text in a list item. */
const cellText = (text: string): string => text.replaceAll('<', '&lt;').replaceAll('|', '\\|')
