import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { spawnCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 26 case 5: a dataset, trace or config file that is a named pipe with no writer. Opening it
 * for reading waits in the OS for a writer, and the process sat there deaf to SIGTERM and Ctrl-C.
 * Each is now refused by its stat before it is opened: exit 2 naming the file and what it is.
 */

/** Nothing listens on port 9 (discard): a run that sent anything would fail its preflight. */
const NOWHERE = 'http://127.0.0.1:9/v1'

/** `run` reading `path` as `flag` against a server that is not there: it must stop before sending. */
const runReading = (flag: string, path: string, out: string): string[] => [
  'run',
  '--base-url',
  NOWHERE,
  '--model',
  'm',
  flag,
  path,
  '--out',
  out,
]

/** A FIFO nobody writes to, or null where mkfifo is not there (Windows). */
function fifo(dir: string, name: string): string | null {
  const path = join(dir, name)
  try {
    execFileSync('mkfifo', [path])
  } catch {
    return null
  }
  return path
}

/** How long a refusal may take: start-up on a loaded machine, far below "forever". */
const PROMPT_MS = 20_000

/**
 * The CLI on `args` as a real child: it must exit by itself within PROMPT_MS. Should it still be
 * waiting, it gets SIGTERM (which must end it too) and the test fails saying it blocked.
 */
async function exitOf(args: string[]): Promise<{ code: number | null; stderr: string; signalled: boolean }> {
  const cli = spawnCli(args)
  let signalled = false
  const timer = setTimeout(() => {
    signalled = true
    cli.child.kill('SIGTERM')
    setTimeout(() => cli.child.kill('SIGKILL'), 5_000).unref()
  }, PROMPT_MS)
  const code = await cli.exited
  clearTimeout(timer)
  // 'exit' can come before the last of stderr is read: its end is 'close'.
  if (cli.child.stderr?.readableEnded !== true)
    await new Promise((resolve) => cli.child.once('close', resolve))
  return { code, stderr: cli.stderr(), signalled }
}

const skip = process.platform === 'win32' ? 'no named pipes (mkfifo) on Windows' : false

for (const [flag, what, name] of [
  ['--dataset', 'dataset', 'data.jsonl'],
  ['--trace', 'trace', 'trace.jsonl'],
  ['--config', 'config file', 'config.toml'],
] as const) {
  test(`a ${what} that is a FIFO with no writer: exit 2 at once, naming the file and what it is`, {
    skip,
    timeout: 60_000,
  }, async (t) => {
    const dir = tempDir()
    const path = fifo(dir, name)
    if (path === null) return t.skip('mkfifo is not available')
    const out = join(dir, 'never')
    const result = await exitOf(runReading(flag, path, out))
    assert.equal(result.signalled, false, `blocked on the FIFO until SIGTERM:\n${result.stderr}`)
    assert.equal(result.code, 2, result.stderr)
    assert.doesNotMatch(result.stderr, /internal error|\n\s+at /, 'no stack trace')
    // The refusal is the last line (the plan's line before it names the file too).
    const line = result.stderr.trimEnd().split('\n').at(-1) ?? ''
    assert.ok(line.includes(path), line)
    assert.match(line, /a named pipe \(FIFO\)/)
    assert.match(line, /reading it would wait for a writer; give the file itself/)
    assert.equal(existsSync(out), false, 'no result folder')
  })
}

test('a dataset that is a directory or a character device is refused by name too', {
  skip,
  timeout: 60_000,
}, async () => {
  const dir = tempDir()
  for (const [path, kind] of [
    [dir, 'is a directory, not a regular file'],
    ['/dev/null', 'is a character device, not a regular file'],
  ] as const) {
    const result = await exitOf(runReading('--dataset', path, join(dir, 'x')))
    assert.equal(result.signalled, false)
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, new RegExp(`dataset ${path}: ${kind}`))
  }
})
