import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCommand } from '../../src/cli/commands/run.js'
import { CliError } from '../../src/cli/exit-codes.js'
import { loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags } from '../../src/config/types.js'
import type { CostEstimate } from '../../src/result/run-meta.js'
import { describeDefaultSizing } from '../../src/run/level/precision-watch.js'
import { describeEstimate } from '../../src/run/plan/estimate.js'
import { RunShapeError } from '../../src/run/plan/run-shape.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { prepareRun, startRun } from '../../src/run/start-run.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 37 item 4: the library and the CLI run the same thing. One settings file, read by
 * `llmbench run` and by a program calling prepareRun/startRun or runGradient directly: each way
 * plans the same run, which shows in the plan's cost estimate. A --max-cost far below it stops every
 * way after the plan and before any request (no preflight: nothing listens at the URL), so the plan
 * is read whole without a server or a clock.
 */

const SETTINGS = `
[target]
base_url = "http://127.0.0.1:9/v1"
model = "m"

[pricing]
input_per_mtok = 1
output_per_mtok = 2
max_cost = 0.000001
`

/** The settings file with `extra` lines (TOML keys of [load]) beside the shared ones. */
function settingsFile(extra: string): string {
  const path = join(tempDir(), 'config.toml')
  writeFileSync(path, `${SETTINGS}\n[load]\n${extra}\n`)
  return path
}

/** `llmbench run -c FILE --no-preflight`, in this process: its exit code and what it said on stderr (as main.ts says a CliError). */
async function viaCli(file: string, args: string[] = []): Promise<{ code: number; stderr: string }> {
  let stderr = ''
  const io = {
    out: () => {},
    err: (text: string) => {
      stderr += text
    },
  }
  try {
    const code = await runCommand(
      ['-c', file, '--no-preflight', '--out', join(tempDir(), 'cli'), ...args],
      io,
    )
    return { code, stderr }
  } catch (error) {
    if (!(error instanceof CliError)) throw error
    return { code: error.exitCode, stderr: `${stderr}${error.message}\n` }
  }
}

/** The same file loaded by a program, without the preflight (the CLI's --no-preflight). */
function libraryConfig(file: string, flags: ConfigFlags = {}) {
  return loadRunConfig({ configFiles: [file], flags: { preflight: false, ...flags } })
}

function estimateOf(outcome: RunOutcome | { kind: string }): CostEstimate {
  assert.equal(outcome.kind, 'over-budget', JSON.stringify(outcome))
  const { estimate } = outcome as Extract<RunOutcome, { kind: 'over-budget' }>
  assert.ok(estimate !== null)
  return estimate
}

/** The plan's estimate as prepareRun + startRun make it, and as runGradient alone makes it. */
async function viaLibrary(
  file: string,
): Promise<{ prepared: CostEstimate; direct: CostEstimate; sizing: string | null }> {
  const session = { log: () => {}, stop: new StopSignal() }
  const run = prepareRun({ config: libraryConfig(file, { out: join(tempDir(), 'prepared') }) })
  const prepared = estimateOf(await startRun(run, session))
  const direct = estimateOf(
    await runGradient({
      config: libraryConfig(file),
      outDir: join(tempDir(), 'direct'),
      apiKey: null,
      ...session,
      stop: new StopSignal(),
    }),
  )
  return { prepared, direct, sizing: describeDefaultSizing(run.config.load) }
}

for (const [what, load] of [
  ['levels nobody sized (the default precision)', 'levels = [1, 2, 4]'],
  ['fixed-size levels', 'levels = [1, 2]\nrequests_per_level = 12'],
  ['a precision asked for', 'levels = [2, 3]\nprecision = { ttft_p50 = 10 }'],
] as const) {
  test(`the CLI, prepareRun and runGradient plan the same run: ${what}`, async () => {
    const file = settingsFile(load)
    const cli = await viaCli(file)
    assert.equal(cli.code, 2, cli.stderr)
    const library = await viaLibrary(file)
    assert.deepEqual(library.direct, library.prepared, 'runGradient alone plans what prepareRun plans')
    // The CLI says the estimate it refused, in the words the library's estimate gives.
    assert.ok(
      cli.stderr.includes(`: ${describeEstimate(library.prepared)}. Lower the levels`),
      `${describeEstimate(library.prepared)}\nnot in\n${cli.stderr}`,
    )
    // The default sizing, when it applies, is said by the CLI as the library decided it.
    if (library.sizing !== null) assert.ok(cli.stderr.includes(library.sizing), cli.stderr)
    else assert.doesNotMatch(cli.stderr, /^sizing:/m)
  })
}

test('the default sizing is what makes the difference: unsized levels are planned to the precision ceiling', async () => {
  const unsized = await viaLibrary(settingsFile('levels = [1, 2, 4]'))
  assert.match(unsized.direct.basis, /--precision's ceiling/)
  assert.match(unsized.sizing ?? '', /^sizing: no --requests, --duration or --precision given/)
})

test('a run the settings cannot make is refused the same way by the CLI and the library', async () => {
  const file = settingsFile('levels = [1, 2]\nrequests_per_level = 12\nrepeat = 2')
  const cli = await viaCli(file, ['--shard', '0/2'])
  assert.equal(cli.code, 2)
  assert.match(cli.stderr, /--repeat 2 cannot be combined with --shard/)
  const config = libraryConfig(file, { out: join(tempDir(), 'refused') })
  assert.throws(() => prepareRun({ config, shard: { index: 0, count: 2 } }), RunShapeError)
  await assert.rejects(
    runGradient({
      config,
      outDir: join(tempDir(), 'refused-direct'),
      apiKey: null,
      log: () => {},
      stop: new StopSignal(),
      shard: { index: 0, count: 2, host: 'h', start_at: null, clock_offset_ms: null, config_digest: 'd' },
    }),
    RunShapeError,
  )
})
