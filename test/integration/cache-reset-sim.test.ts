import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { CacheResetMode } from '../../src/config/cache-reset-mode.js'
import type { RunConfig } from '../../src/config/types.js'
import { cachedPromptTokens } from '../../src/metrics/in-band-figures.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import type { RunOutcome } from '../../src/run/run-gradient.js'

import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runQuietly } from '../helpers/run-result.js'

/**
 * --reset-cache against the simulator's prefix cache, which serves vLLM's POST /reset_prefix_cache:
 * every prompt shares a long prefix, so a level's first request finds it cached from the level before
 * unless the cache was reset in between.
 */
const LEVELS = [1, 2, 3]

function config(url: string, mode: CacheResetMode): RunConfig {
  const c = testConfig(url, SIM_MODEL, {
    levels: LEVELS,
    requests: 6,
    input_tokens: 256,
    output_tokens: 4,
    out_dir: join(tempDir(), 'run'),
  })
  c.workload.shared_prefix = 192
  c.load.control = false
  c.run.reset_cache = mode
  return c
}

/** Per level after the first: the cached tokens of its first measured request (by send time). */
function firstRequestsCached(records: RequestRecord[]): number[] {
  return LEVELS.slice(1).map((level) => {
    const first = records
      .filter((r) => r.level === level && r.phase === 'measure')
      .sort((a, b) => a.sent_at - b.sent_at)[0]
    assert.ok(first !== undefined, `level ${level} has measured requests`)
    return cachedPromptTokens(first) ?? -1
  })
}

test('before-level empties the prefix cache before each level: its first request is no cache hit; without it, it is', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({
    slots: 4,
    prefix_cache: true,
    prefill_ms_per_token: 0.05,
    decode_base_ms: 2,
  })
  try {
    const results: { result: BenchResult; records: RequestRecord[] }[] = []
    for (const mode of ['before-level', 'off'] as const) {
      const c = config(sim.url, mode)
      const outcome = await runQuietly(c)
      assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
      const { result } = outcome as Extract<RunOutcome, { kind: 'done' }>
      results.push({ result, records: readRecords(join(c.run.out_dir as string, RECORDS_FILE)).records })
    }
    const [reset, kept] = results as [(typeof results)[0], (typeof results)[0]]
    assert.deepEqual(firstRequestsCached(reset.records), [0, 0], 'after a reset the prefix is computed again')
    for (const cached of firstRequestsCached(kept.records))
      assert.ok(
        cached >= 128,
        `without a reset the shared prefix is served from the cache (${cached} tokens)`,
      )
    const meta = reset.result.meta.cache_reset
    assert.equal(meta?.call, 'POST /reset_prefix_cache')
    assert.equal(meta?.engine, 'vllm')
    assert.deepEqual(
      meta?.resets.map((r) => r.before),
      LEVELS.map((level) => `c=${level}`),
    )
    for (const r of meta?.resets ?? []) {
      assert.equal(r.error, undefined)
      assert.ok(Number.isFinite(Date.parse(r.at)))
    }
    assert.match(meta?.note ?? '', /^cache reset before each level via POST \/reset_prefix_cache$/)
    assert.equal(kept.result.meta.cache_reset, undefined)
  } finally {
    await sim.close()
  }
})

test('before-run resets once, after the probes; a server with no known call is refused before the load', {
  timeout: 60_000,
}, async () => {
  const withCache = await startSimulator({ slots: 4, prefix_cache: true, decode_base_ms: 2 })
  const without = await startSimulator({ slots: 4, decode_base_ms: 2 })
  try {
    const once = await runQuietly(config(withCache.url, 'before-run'))
    assert.equal(once.kind, 'done')
    const meta = (once as Extract<RunOutcome, { kind: 'done' }>).result.meta.cache_reset
    assert.deepEqual(
      meta?.resets.map((r) => r.before),
      ['the first level'],
    )

    const c = config(without.url, 'before-level')
    const refused = await runQuietly(c)
    assert.equal(refused.kind, 'cache-reset-refused')
    assert.match(
      (refused as Extract<RunOutcome, { kind: 'cache-reset-refused' }>).reason,
      /^--reset-cache: the server's engine was not recognised .*POST \/reset_prefix_cache/,
    )
    assert.equal(existsSync(join(c.run.out_dir as string, RECORDS_FILE)), false, 'no level was run')
  } finally {
    await withCache.close()
    await without.close()
  }
})
