import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

const MALFORMED = fileURLToPath(new URL('../fixtures/datasets/malformed.jsonl', import.meta.url))
/** Nothing listens on port 9 (discard): a run that sent anything would fail its preflight. */
const NOWHERE = 'http://127.0.0.1:9/v1'

test('a malformed dataset or tokenizer file is a usage error naming the file and lines; nothing is sent', {
  timeout: 60_000,
}, async () => {
  const out = join(tempDir(), 'never')
  const dataset = await runCli([
    'run',
    '--base-url',
    NOWHERE,
    '--model',
    'm',
    '--dataset',
    MALFORMED,
    '--out',
    out,
  ])
  assert.equal(dataset.code, 2, dataset.stderr)
  for (const line of [3, 5, 7, 9])
    assert.match(dataset.stderr, new RegExp(`malformed\\.jsonl:${line}: not valid JSON`))
  assert.doesNotMatch(dataset.stderr, /preflight/, 'failed before any request')
  assert.equal(existsSync(out), false, 'no result folder for a run that never started')
  const tokenizer = await runCli([
    'run',
    '--base-url',
    NOWHERE,
    '--model',
    'm',
    '--tokenizer',
    '/no/such/tokenizer.json',
  ])
  assert.equal(tokenizer.code, 2)
  assert.match(tokenizer.stderr, /tokenizer: \/no\/such\/tokenizer\.json: not found/)
})

test('--max-cost: the plan states the cost; above the limit the run does not start (exit 2); below, costs are reported', {
  timeout: 90_000,
}, async () => {
  const sim = await startSimulatorProcess({ prefill_base_ms: 5, decode_base_ms: 2 })
  const dir = tempDir()
  const config = join(dir, 'config.toml')
  writeFileSync(
    config,
    [
      '[target]',
      `base_url = "${sim.url}"`,
      `model = "${SIM_MODEL}"`,
      '[load]',
      'levels = [1, 2]',
      'requests_per_level = 10',
      'warmup_requests = 2',
      '[workload]',
      'input_tokens = 100',
      'output_tokens = 20',
      '[pricing]',
      'input_per_mtok = 3',
      'output_per_mtok = 15',
      'currency = "USD"',
    ].join('\n'),
  )
  try {
    // 24 requests × (100 × $3 + 20 × $15) / 1M = $0.0144
    const refused = await runCli(['run', '-c', config, '--max-cost', '0.01', '--out', join(dir, 'refused')], {
      inProcess: true,
    })
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(
      refused.stderr,
      /plan: 24 requests, ~2400 input and ≤480 output tokens, estimated cost 0\.0144 USD/,
    )
    assert.match(refused.stderr, /not started: estimated cost 0\.0144 USD is above --max-cost 0\.01/)
    // Refused before the load: no level started, so no result folder was made.
    assert.equal(existsSync(join(dir, 'refused')), false, 'nothing of the load went out')
    const allowed = await runCli([
      'run',
      '-c',
      config,
      '--max-cost',
      '0.02',
      '--out',
      join(dir, 'ran'),
      '--json',
    ])
    assert.equal(allowed.code, 0, allowed.stderr)
    const result = JSON.parse(allowed.stdout) as BenchResult
    assert.equal(result.cost?.estimated, 0.0144)
    const records = readRecords(join(dir, 'ran', 'requests.jsonl')).records
    for (const level of result.levels) {
      const measured = records.filter((r) => r.phase === 'measure' && r.level === level.value)
      // Input as the server counted it (chars / 4 in this simulator; calibration keeps it near 100).
      const input = measured.reduce((sum, r) => sum + (r.input_tokens ?? 0), 0)
      assert.ok(
        Math.abs(input / measured.length - 100) < 3,
        `mean server-counted input ${input / measured.length}`,
      )
      assert.equal(level.cost?.input_tokens, input)
      assert.equal(level.cost?.output_tokens, level.output_tokens)
      assert.ok(Math.abs((level.cost?.amount ?? 0) - (input * 3 + level.output_tokens * 15) / 1e6) < 1e-9)
    }
    const billed = records.reduce((sum, r) => sum + (r.input_tokens ?? 0) * 3 + r.output_tokens * 15, 0) / 1e6
    assert.ok(
      Math.abs((result.cost?.total ?? 0) - billed) < 1e-9,
      'total: every request sent, probes included',
    )
    assert.ok((result.cost?.total ?? 0) > (result.cost?.measured ?? 0))
    const summary = readFileSync(join(dir, 'ran', 'summary.md'), 'utf8')
    assert.match(summary, /\| tokens in \/ out \| cost USD \|/, 'tokens and cost per level in the table')
    assert.match(
      summary,
      /Cost: measured levels 0\.\d{4} USD, all requests sent 0\.\d{4}, estimated before the run 0\.0144/,
    )
  } finally {
    await sim.close()
  }
})
