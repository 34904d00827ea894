import assert from 'node:assert/strict'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Saturation } from '../../src/analysis/saturation.js'
import { appendHistory, readHistory, renderHistory } from '../../src/report/history.js'
import { RESULT_SCHEMA } from '../../src/result/bench-result.js'
import { buildResult, summaryOptions } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { RESULT_SCHEMA_V1, upgradeResult } from '../../src/result/upgrade.js'
import { tempDir } from '../helpers/run-config.js'

/** Result folders llmbench wrote before llmbench.result/2 (see the README beside them). */
const V1 = fileURLToPath(new URL('../fixtures/result-v1/', import.meta.url))

test('a /1 summary is read as the /2 summary its own records rebuild: value and mode for every level value', () => {
  for (const name of ['concurrency', 'rate', 'shard-0']) {
    const raw = JSON.parse(readFileSync(join(V1, name, 'bench_result.json'), 'utf8'))
    assert.equal(raw.schema, RESULT_SCHEMA_V1, `${name} is a /1 fixture`)
    const run = loadRun(join(V1, name))
    assert.equal(run.result.schema, RESULT_SCHEMA)
    assert.doesNotMatch(
      JSON.stringify(run.result),
      /"concurrency":/,
      `${name}: no level value left as concurrency`,
    )
    // The rebuilt summary is what `report` writes: the upgrade must agree with it field for field.
    // Only what came later differs: the definitions (the /1 file kept those of its day; today's also
    // define `value`), the knee's cause, which a rebuild adds and an upgrade (a rename) does not, and
    // the schedule's latest send (lateness_max_ms), which a rebuild reads from the records.
    // Since then, too: each level's intervals and open-loop evidence, the schedule's lateness p95 and
    // connection waits, and the knee decided on that evidence, whose words (reason, summary, advice)
    // quote it: the upgrade keeps the /1 words, the rebuild says today's. The verdicts, the knee's
    // level and bracket must still agree. And the capacity model, which a rebuild fits and an upgrade
    // (a rename) cannot.
    const rebuilt = buildResult(run.records ?? [], run.result.meta)
    assert.ok(rebuilt.model !== undefined, `${name}: a rebuild fits the capacity model`)
    delete rebuilt.model
    for (const level of rebuilt.levels) {
      delete level.schedule?.lateness_max_ms
      delete level.schedule?.lateness_p95_ms
      delete level.schedule?.late_connecting
      delete level.schedule?.connection_wait_ms_max
      delete level.intervals
      delete level.open_loop
      // Speculative decoding's figures came later still (issue 41): a rebuild reads them from the records.
      delete level.speculative
      delete level.acceptance_length
    }
    const { cause, reason, confidence, ...knee } = rebuilt.saturation ?? { cause: undefined }
    assert.equal(cause?.kind ?? 'no-server-data', 'no-server-data', `${name}: a /1 run had no server figures`)
    const words = (result: typeof rebuilt) => ({
      ...result,
      // The answer came later too: a rebuild states it, an upgrade leaves it to answerOf.
      answer: undefined,
      definitions: undefined,
      saturation_summary: undefined,
      saturation: result.saturation === null ? null : { ...result.saturation, reason: undefined },
      levels: result.levels.map((level) => ({ ...level, advice: undefined })),
    })
    assert.deepEqual(
      words(run.result),
      words({
        ...rebuilt,
        saturation: rebuilt.saturation === null ? null : ({ ...knee, reason: '' } as Saturation),
      }),
      name,
    )
  }

  const gradient = loadRun(join(V1, 'concurrency')).result
  assert.deepEqual(
    gradient.levels.map((level) => [level.value, level.mode]),
    [
      [1, 'concurrency'],
      [2, 'concurrency'],
      [4, 'concurrency'],
      [8, 'concurrency'],
    ],
  )
  assert.deepEqual(
    gradient.meta.levels_run.map((level) => level.value),
    [1, 2, 4, 8],
  )
  assert.equal(gradient.saturation?.value, 4)
  assert.equal(gradient.saturation?.mode, 'concurrency')
  assert.deepEqual(gradient.saturation?.bracket, [4, 8])
  assert.equal(gradient.capacity?.value, 8)
  assert.equal(gradient.capacity?.mode, 'concurrency')

  // Rate mode: what /1 called concurrency was requests per second all along.
  const rate = loadRun(join(V1, 'rate')).result
  assert.deepEqual(
    rate.levels.map((level) => [level.value, level.mode]),
    [
      [2, 'request_rate'],
      [4, 'request_rate'],
    ],
  )
  assert.deepEqual(rate.capacity, {
    value: 4,
    mode: 'request_rate',
    reason: 'highest level meeting every SLO: ttft_p95_ms 25.677 ≤ 200',
  })
  assert.equal(rate.saturation, null)
})

test('results that kept the timeout and retry count in meta.load (every /1, older /2) read them in meta.client', () => {
  const fromV1 = loadRun(join(V1, 'rate')).result
  assert.deepEqual(
    Object.keys(fromV1.meta.client).slice(0, 2),
    ['timeout_s', 'retry'],
    'first, as a run writes them',
  )
  assert.equal(fromV1.meta.client.timeout_s, 120)
  assert.equal(fromV1.meta.client.retry, 0)
  assert.equal('timeout_s' in fromV1.meta.load || 'retry' in fromV1.meta.load, false)
  // A /2 result written before the move: the same meta with the two settings back in load.
  const { timeout_s, retry, ...client } = fromV1.meta.client
  const olderV2 = {
    ...fromV1,
    meta: { ...fromV1.meta, load: { ...fromV1.meta.load, retry, timeout_s }, client },
  }
  const dir = tempDir()
  writeFileSync(join(dir, 'bench_result.json'), JSON.stringify(olderV2))
  const read = loadRun(dir).result
  assert.deepEqual(read, fromV1)
  assert.deepEqual(JSON.stringify(read.meta), JSON.stringify(fromV1.meta), 'key for key, in order')
  // The timeout is what error-adjusted figures count a failed request as.
  assert.equal(summaryOptions(read.meta).timeoutMs, 120_000)
})

test('a result of any other schema is refused, naming the file and the schemas read', () => {
  for (const schema of ['llmbench.result/3', 'other', undefined]) {
    assert.throws(
      () => upgradeResult({ schema, levels: [] }, 'x/bench_result.json'),
      (error: Error) =>
        error.message ===
        `x/bench_result.json: schema ${JSON.stringify(schema)}, expected llmbench.result/2 (or llmbench.result/1, which is read too)`,
    )
  }
  assert.throws(
    () => upgradeResult(null, 'f.json'),
    /f\.json: schema undefined, expected llmbench\.result\/2/,
  )
  const dir = tempDir()
  writeFileSync(join(dir, 'bench_result.json'), '{"schema":"llmbench.result/0"}')
  assert.throws(
    () => loadRun(dir),
    /bench_result\.json: schema "llmbench\.result\/0", expected llmbench\.result\/2/,
  )
})

test('history: lines written before /2 (levels by `concurrency`, no mode) are read beside new ones', () => {
  const dir = tempDir()
  copyFileSync(join(V1, 'history.jsonl'), join(dir, 'history.jsonl'))
  appendHistory(dir, loadRun(join(V1, 'concurrency')).result)
  const [oldGradient, oldRate, newGradient] = readHistory(dir)
  assert.equal(oldGradient?.mode, null, 'an old line does not say what its levels counted')
  assert.equal(oldRate?.mode, null)
  assert.equal(newGradient?.mode, 'concurrency')
  assert.deepEqual(
    oldGradient?.levels.map((level) => level.value),
    [1, 2, 4, 8],
  )
  assert.deepEqual(newGradient, { ...oldGradient, mode: 'concurrency' }, 'the same run, old line and new')
  const written = JSON.parse(readFileSync(join(dir, 'history.jsonl'), 'utf8').trim().split('\n')[2] ?? '')
  assert.equal(written.levels[0].value, 1)
  assert.equal('concurrency' in written.levels[0], false)
  // The same run renders the same trend row from either line.
  const [, , oldRow, , newRow] = renderHistory(readHistory(dir)).split('\n')
  assert.match(oldRow ?? '', /\| 4 \| 8 \| 293\.1 \| 132 \(c=8\) \|$/)
  assert.equal(newRow, oldRow)
})
