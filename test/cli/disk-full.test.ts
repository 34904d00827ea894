import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { startSimulator } from '../../src/sim/server.js'
import { simRunArgs, spawnCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/** A 200 KiB tmpfs: the records of a fast run fill it in about a second. Null (with why) where none can be made. */
function smallDisk(): { dir: string; unmount: () => void } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root' }
  const dir = tempDir('llmbench-full-disk-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=200k', 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    return { skip: `mount -t tmpfs failed: ${(error as Error).message.split('\n')[0]}` }
  }
  return { dir, unmount: () => execFileSync('umount', [dir]) }
}

test('disk full while records are written: the run stops, says "no space left on device" with the path, exits 4, the files stay readable', {
  timeout: 90_000,
}, async (t) => {
  const disk = smallDisk()
  if ('skip' in disk) {
    t.skip(disk.skip)
    return
  }
  const sim = await startSimulator({ prefill_base_ms: 1, decode_base_ms: 1, decode_ms_per_seq: 0 })
  const out = join(disk.dir, 'result')
  try {
    const run = spawnCli(
      simRunArgs(sim.url, out, { levels: '1,4,8', duration: 20, warmup: 0, 'output-tokens': 4 }),
    )
    const code = await run.exited
    const stderr = run.stderr()
    assert.equal(code, 4, stderr)
    assert.match(
      stderr,
      new RegExp(`no space left on device writing ${out}/(requests\\.jsonl|bench_result\\.json)`),
    )
    assert.doesNotMatch(stderr, /internal error|\n\s+at /, 'no stack trace')
    const { records, tornLastLine } = readRecords(join(out, 'requests.jsonl'))
    assert.equal(tornLastLine, false, 'the last line is whole')
    assert.ok(
      records.some((record) => record.phase === 'measure'),
      'the records written are kept',
    )
    // The summary, when one was written, is the last complete one, never a half file.
    if (existsSync(join(out, 'bench_result.json')))
      JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
  } finally {
    await sim.close()
    disk.unmount()
  }
})
