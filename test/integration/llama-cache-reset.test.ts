// A real engine on one thread of this CPU, in the shared lane: its subject is what the server caches,
// not its speed (the knee on the real engine, which is, keeps the alone lane: llama-cpp.test.ts).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { CacheResetMode } from '../../src/config/cache-reset-mode.js'
import type { RunConfig } from '../../src/config/types.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import type { RunOutcome } from '../../src/run/run-gradient.js'

import { freePort } from '../helpers/free-port.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runQuietly } from '../helpers/run-result.js'

/**
 * --reset-cache against a real llama.cpp (the team's kit beside this repository): its slot erase
 * empties the slots' KV cache, which llama.cpp's own `timings.prompt_n` (the prompt tokens it
 * computed) shows. Every prompt shares a long prefix, so the second level's first request finds it in
 * a slot the first level used unless the slots were erased between them.
 */
const KIT = fileURLToPath(new URL('../../../shared/engines/llama.cpp/start.sh', import.meta.url))
const SLOTS = 2
const skip = existsSync(KIT)
  ? false
  : `no llama.cpp kit at ${KIT} (the team's ../shared is not beside this clone)`

function startLlamaServer(port: number, flags: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    // First use writes the model (seconds) and may apt-get its Python dependencies (a minute).
    execFile(
      'bash',
      [KIT, String(port), String(SLOTS), ...flags],
      { timeout: 300_000 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${KIT} failed: ${stderr || error.message}`))
        else resolve(Number.parseInt(stdout.trim(), 10))
      },
    )
  })
}

function config(port: number, mode: CacheResetMode): RunConfig {
  const c = testConfig(`http://127.0.0.1:${port}`, 'tiny', {
    levels: [1, 2],
    requests: 4,
    input_tokens: 256,
    output_tokens: 4,
    out_dir: join(tempDir(), 'run'),
  })
  c.workload.shared_prefix = 192
  c.load.control = false
  c.run.reset_cache = mode
  return c
}

/** The second level's first measured request, by send time. */
function secondLevelFirst(c: RunConfig): RequestRecord {
  const { records } = readRecords(join(c.run.out_dir as string, RECORDS_FILE))
  const first = records
    .filter((r) => r.level === 2 && r.phase === 'measure')
    .sort((a, b) => a.sent_at - b.sent_at)[0]
  assert.ok(first !== undefined && first.error === null, 'level 2 has a successful first request')
  return first
}

test('llama.cpp: before-level erases every slot, so the next level computes its whole prompt; without it the prefix is cached', {
  skip,
  timeout: 600_000,
}, async (t) => {
  const port = await freePort()
  const slotDir = join(tempDir(), 'slots')
  mkdirSync(slotDir)
  const pid = await startLlamaServer(port, ['--slot-save-path', slotDir])
  try {
    const reset = config(port, 'before-level')
    const outcome = await runQuietly(reset)
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
    const meta = (outcome as Extract<RunOutcome, { kind: 'done' }>).result.meta as BenchResult['meta']
    assert.equal(meta.cache_reset?.call, 'POST /slots/{id}?action=erase')
    assert.equal(meta.cache_reset?.calls_per_reset, SLOTS)
    assert.deepEqual(
      meta.cache_reset?.resets.map((r) => [r.before, r.error]),
      [
        ['c=1', undefined],
        ['c=2', undefined],
      ],
    )
    const computed = secondLevelFirst(reset)
    const kept = config(port, 'off')
    assert.equal((await runQuietly(kept)).kind, 'done')
    const cached = secondLevelFirst(kept)
    t.diagnostic(
      `c=2's first request: with the reset prompt_n ${computed.server_timings?.prompt_n} of ${computed.input_tokens} prompt tokens; ` +
        `without it prompt_n ${cached.server_timings?.prompt_n} of ${cached.input_tokens}`,
    )
    assert.equal(
      computed.server_timings?.prompt_n,
      computed.input_tokens,
      'the whole prompt computed after the erase',
    )
    assert.ok(
      (cached.server_timings?.prompt_n as number) < (cached.input_tokens as number) / 2,
      'without a reset the shared prefix comes from the slot cache',
    )
  } finally {
    process.kill(pid)
  }
})

test('llama.cpp without --slot-save-path refuses slot actions: the run is refused before the load, quoting it', {
  skip,
  timeout: 300_000,
}, async () => {
  const port = await freePort()
  const pid = await startLlamaServer(port, [])
  try {
    const c = config(port, 'before-run')
    const outcome = await runQuietly(c)
    assert.equal(outcome.kind, 'cache-reset-refused')
    const { reason } = outcome as Extract<RunOutcome, { kind: 'cache-reset-refused' }>
    assert.match(
      reason,
      /^--reset-cache: llama\.cpp's cache reset POST \/slots\/0\?action=erase answered HTTP 501/,
    )
    assert.match(reason, /--slot-save-path/)
    assert.equal(existsSync(join(c.run.out_dir as string, RECORDS_FILE)), false, 'no level was run')
  } finally {
    process.kill(pid)
  }
})
