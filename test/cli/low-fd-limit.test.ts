import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULTS } from '../../src/config/load.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { fdLimitWarning, openFileLimit } from '../../src/run/setup/fd-limit.js'
import { startSimulator } from '../../src/sim/server.js'
import { CLI, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

const hasBash = spawnSync('bash', ['-c', 'exit 0']).status === 0

// Each command's modules load only when it runs, and zod through require(): at `ulimit -n 64` the
// ESM loader's parallel opens of every command's graph (vega, zod's locales) failed with EMFILE.
for (const command of ['run', 'init', 'sim', 'check']) {
  test(`at ulimit -n 64, \`llmbench ${command} --help\` starts (exit 0, its help), no EMFILE`, {
    skip: hasBash ? false : 'needs bash for ulimit',
    timeout: 60_000,
  }, () => {
    const result = spawnSync(
      'bash',
      ['-c', `ulimit -n 64 && exec "$0" "$1" ${command} --help`, process.execPath, CLI],
      {
        encoding: 'utf8',
        timeout: 50_000,
      },
    )
    assert.equal(result.status, 0, result.stderr)
    assert.doesNotMatch(result.stderr, /EMFILE|internal error/)
    assert.match(result.stdout + result.stderr, new RegExp(`llmbench ${command}`))
  })
}

test('a level wider than ulimit -n: warned before the run, EMFILE failures are the client’s (client-bound, raise ulimit -n), not the server’s', {
  skip: hasBash ? false : 'needs bash for ulimit',
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 200, decode_base_ms: 5 })
  const out = join(tempDir(), 'result')
  try {
    const args = simRunArgs(sim.url, out, {
      levels: 100,
      requests: 100,
      warmup: 0,
      'output-tokens': 5,
      'no-preflight': true,
    })
    const child = spawn('bash', ['-c', 'ulimit -n 64 && exec "$@"', 'bash', process.execPath, CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    assert.doesNotMatch(stderr, /internal error/, stderr)
    assert.match(stderr, /warning: the open-file limit \(ulimit -n\) is 64, and 100 streams need about 164/)
    assert.match(stderr, /CLIENT-BOUND/, stderr)
    assert.match(stderr, /too many open files \(EMFILE\/ENFILE\): raise ulimit -n/)
    const { records } = readRecords(join(out, 'requests.jsonl'))
    const failed = records.filter((record) => record.error !== null)
    assert.ok(failed.length > 0, 'some streams found no file descriptor')
    for (const record of failed) assert.match(record.error?.message ?? '', /EMFILE|ENFILE/)
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(result.levels[0].verdict, 'client-bound')
    // The figures are kept, and the report is drawn at this limit too: vega and vega-lite load from their
    // single-file builds (two files, not the hundred-odd modules that failed with EMFILE here before).
    assert.doesNotMatch(stderr, /charts and report\.html not drawn/, stderr)
    assert.ok(readFileSync(join(out, 'summary.md'), 'utf8').length > 0)
    assert.ok(readFileSync(join(out, 'report.html'), 'utf8').includes('<svg'), 'report.html with its charts')
    // A level that lost most requests to the client's limit measured nothing to trust: the success-rate
    // gate fails (exit 1), as documented, after the lines above said why.
    assert.equal(code, 1, stderr)
  } finally {
    await sim.close()
  }
})

test('the open-file limit is read from /proc/self/limits and weighed against the widest level', () => {
  const limits =
    'Limit                     Soft Limit           Hard Limit           Units\nMax open files            256                  4096                 files\n'
  assert.equal(openFileLimit(limits), 256)
  assert.equal(
    openFileLimit('Max open files            unlimited            unlimited            files\n'),
    null,
  )
  const load = { ...DEFAULTS.load, mode: 'concurrency' as const, levels: [1, 8, 200] }
  assert.match(fdLimitWarning(load, 256) ?? '', /is 256, and 200 streams need about 264/)
  assert.equal(fdLimitWarning({ ...load, levels: [1, 8, 64] }, 256), null)
  assert.equal(fdLimitWarning(load, null), null, 'skipped where the limit cannot be read')
})
