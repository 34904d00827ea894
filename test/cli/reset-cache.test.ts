import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { startSimulator } from '../../src/sim/server.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

const FLAGS: Record<string, string | number | true> = {
  levels: '1,2',
  requests: 4,
  warmup: 0,
  'input-tokens': 64,
  'output-tokens': 4,
  'no-calibrate': true,
}

test('run --reset-cache against a server with no cache-reset call: one line, exit 2, no folder', async () => {
  await withSimRun(
    startSimulator({ decode_base_ms: 1 }),
    { flags: { ...FLAGS, 'reset-cache': 'before-level' } },
    ({ run, out }) => {
      assert.equal(run.code, 2, run.stderr)
      const line = run.stderr.split('\n').find((l) => l.startsWith('llmbench: not started:'))
      assert.match(
        line ?? '',
        /^llmbench: not started: --reset-cache: the server's engine was not recognised/,
      )
      assert.equal(existsSync(out), false)
    },
  )
})

test('run --reset-cache before-level against the simulator with a prefix cache: said, and recorded per level', async () => {
  await withSimRun(
    startSimulator({ decode_base_ms: 1, prefix_cache: true }),
    { flags: { ...FLAGS, 'reset-cache': 'before-level', 'no-control': true } },
    ({ run, out }) => {
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stderr, /cache reset before each level via POST \/reset_prefix_cache/)
      assert.deepEqual(
        readResult(out).meta.cache_reset?.resets.map((r) => r.before),
        ['c=1', 'c=2'],
      )
    },
  )
})

test('--reset-cache with a value it does not know: exit 2 naming the values', async () => {
  await withSimRun(startSimulator({}), { flags: { ...FLAGS, 'reset-cache': 'always' } }, ({ run }) => {
    assert.equal(run.code, 2)
    assert.match(run.stderr, /--reset-cache/)
    assert.match(run.stderr, /"off", "before-level", "before-run"/)
  })
})
