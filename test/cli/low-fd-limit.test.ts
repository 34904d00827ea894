import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { CLI } from '../helpers/cli.js'

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
