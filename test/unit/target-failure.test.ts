import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { LevelFigures } from '../../src/metrics/target-levels.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { finishResult } from '../../src/result/build-result.js'
import { targetResults } from '../../src/result/target-results.js'

/**
 * Issue 36 item 12: three endpoints, one answering, one hanging (timeouts), one refusing the key.
 * Each is judged on its own figures: the dead ones are failed or misconfigured, never "not
 * saturated", and the answering one keeps its curve. Levels are a real run's (rendered/conc).
 */
const TEMPLATE = JSON.parse(
  readFileSync(new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url), 'utf8'),
) as BenchResult
const levelAt = (i: number) => TEMPLATE.levels[i] as LevelFigures

function dead(level: LevelFigures, how: 'hangs' | 'refuses'): LevelFigures {
  const message = how === 'hangs' ? 'timeout: no answer within 5 s' : 'HTTP 401: invalid API key'
  return {
    ...level,
    ok: 0,
    failed: level.requests,
    success_rate: 0,
    error_messages: [{ message, count: level.requests, numbers_vary: false }],
    misconfiguration:
      how === 'refuses'
        ? {
            requests: level.requests,
            cause: 'auth',
            message: 'the API key was refused (HTTP 401)',
            hint: 'check the key',
          }
        : null,
  }
}

test('a hanging target is failed and a refusing one misconfigured; neither is "not saturated"', () => {
  const split = {
    endpoints: [
      { url: 'http://a/v1', weight: 1 },
      { url: 'http://b/v1', weight: 1 },
      { url: 'http://c/v1', weight: 1 },
    ],
    models: [{ id: 'm', weight: 1 }],
  }
  const byLevel = [0, 1, 2].map((i) => ({
    level: levelAt(i).value,
    figures: [levelAt(i), dead(levelAt(i), 'hangs'), dead(levelAt(i), 'refuses')],
  }))
  const [live, hanging, refusing] = targetResults(split, byLevel, 'p95', false)
  assert.equal(live?.failed, undefined)
  assert.doesNotMatch(live?.saturation_summary ?? '', /failed|misconfigured/)
  assert.match(
    hanging?.failed ?? '',
    /^failed: 0 of \d+ requests succeeded; \d+× timeout: no answer within 5 s$/,
  )
  assert.equal(hanging?.saturation, null)
  assert.match(refusing?.failed ?? '', /^misconfigured: 0 of \d+ requests succeeded; the API key was refused/)
  for (const target of [hanging, refusing])
    assert.doesNotMatch(target?.saturation_summary ?? '', /not saturated/)
})

/** The run's pooled level: the live target's requests beside a hanging target's timeouts. */
function pooledWithHanging(live: LevelFigures, hanging: LevelFigures): LevelFigures {
  const requests = live.requests + hanging.requests
  const ok = live.ok + hanging.ok
  return {
    ...live,
    requests,
    ok,
    failed: live.failed + hanging.failed,
    success_rate: ok / requests,
    errors: { ...live.errors, timeout: live.errors.timeout + hanging.requests },
    error_messages: hanging.error_messages,
  }
}

test("the run's levels are judged on the live target: a hanging one's timeouts do not make them overloaded", () => {
  const hangs = (level: LevelFigures): LevelFigures => ({
    ...dead(level, 'hangs'),
    errors: { ...level.errors, timeout: level.requests },
  })
  const split = {
    endpoints: [
      { url: 'http://a/v1', weight: 1 },
      { url: 'http://b/v1', weight: 1 },
    ],
    models: [{ id: 'm', weight: 1 }],
  }
  const live = [0, 1, 2].map(levelAt)
  const meta = { ...TEMPLATE.meta, split }
  const judge = (second: (level: LevelFigures) => LevelFigures) =>
    finishResult(
      live.map((level) => pooledWithHanging(level, second(level))),
      meta,
      { targets: live.map((level) => ({ level: level.value, figures: [level, second(level)] })) },
    )
  const result = judge(hangs)
  for (const level of result.levels) {
    assert.notEqual(level.verdict, 'overloaded', `level ${level.value}: ${level.advice}`)
    assert.match(level.advice, /of its failures are from a failed target \(http:\/\/b\/v1 \(m\)\), not load/)
  }
  assert.match(result.saturation_summary, /a target failed .*http:\/\/b\/v1 \(m\) failed: 0 of \d+ requests/)
  // The same timeouts spread over both targets (each answering most requests) are load: overloaded.
  const half = (level: LevelFigures): LevelFigures => {
    const failed = Math.floor(level.requests / 3)
    return {
      ...level,
      ok: level.requests - failed,
      failed,
      success_rate: (level.requests - failed) / level.requests,
      errors: { ...level.errors, timeout: failed },
    }
  }
  const loaded = finishResult(
    live.map((level) => pooledWithHanging(half(level), half(level))),
    meta,
    { targets: live.map((level) => ({ level: level.value, figures: [half(level), half(level)] })) },
  )
  for (const level of loaded.levels) assert.equal(level.verdict, 'overloaded')
})
