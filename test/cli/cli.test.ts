// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { escapeHtml } from '../../src/report/escape-html.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { CLI, cliArgs, runCli, spawnCli } from '../helpers/cli.js'
import { filesUnder } from '../helpers/files.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'
import { waitUntil } from '../helpers/wait.js'

const SEED_SETTINGS = fileURLToPath(new URL('../fixtures/config/settings.json', import.meta.url))
const SEED_TOML = fileURLToPath(new URL('../fixtures/config/config.toml', import.meta.url))
/** A distinctive key: if it shows up anywhere, it leaked. */
const SECRET = 'sk-llmbench-TEST-7f3a9c1e5b2d4086-DO-NOT-LEAK'

function assertNoSecret(texts: Record<string, string>): void {
  for (const [where, text] of Object.entries(texts))
    assert.ok(!text.includes(SECRET), `API key leaked into ${where}`)
}

test('help for every command shows the defaults; no command and unknown ones exit 2', async () => {
  // Wide enough that no flag's text wraps: each default is on its flag's line.
  const wide = { env: { COLUMNS: '400' } }
  const run = await runCli(['run', '--help'], wide)
  assert.equal(run.code, 0)
  assert.match(run.stdout, /--levels 1,4,8\s+concurrency levels \(default: 1,4,8,16,32,64\)/)
  assert.match(run.stdout, /--api-key-env NAME .*\(default: OPENAI_API_KEY\)/)
  // One default each: --protocol's comes from the endpoint before DEFAULTS.
  assert.match(run.stdout, /--protocol \S+\s+wire protocol \(default: from the endpoint, else chat\)\n/)
  const sim = await runCli(['sim', '--help'], wide)
  assert.match(sim.stdout, /--slots N .*\(default: 16\)/)
  const demo = await runCli(['demo', '--help'], wide)
  assert.match(demo.stdout, /--duration SECONDS .*\(default: 3\)/)
  // A pipe has no terminal width: $COLUMNS, else 100. Every line fits; the text keeps its column.
  for (const columns of ['80', undefined]) {
    const narrow = await runCli(['run', '--help'], { env: { COLUMNS: columns } })
    const width = Number(columns ?? 100)
    const over = narrow.stdout.split('\n').filter((line) => line.length > width)
    assert.deepEqual(over, [], `COLUMNS=${columns}`)
    assert.match(narrow.stdout, /--api-key-env NAME +\S[^\n]*\n {37}\S/)
  }
  assert.equal((await runCli([])).code, 2)
  const unknown = await runCli(['launch'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /unknown command 'launch'/)
})

test('an unknown flag or a bad flag value is a usage error (exit 2), not ignored', async () => {
  const unknown = await runCli(['run', '--model', 'm', '--concurency', '4'], { inProcess: true })
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /Unknown option '--concurency'/)
  const near = await runCli(['run', '--model', 'm', '--level', '1,2'], { inProcess: true })
  assert.equal(near.code, 2)
  assert.match(near.stderr, /Unknown option '--level' \(did you mean --levels\?\)/)
  const badLevels = await runCli(
    ['run', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--levels', '1,x,4'],
    { inProcess: true },
  )
  assert.equal(badLevels.code, 2)
  // The part as written, not "got NaN".
  assert.match(badLevels.stderr, /flags: --levels\[1\]: expected a positive integer, got "x"/)
})

test('a broken config file: every problem reported at once with file and key path, exit 2', async () => {
  const dir = tempDir()
  const file = join(dir, 'settings.json')
  writeFileSync(
    file,
    JSON.stringify({
      llm: { base_url: 'not a url', model: 'm', timout_seconds: 5 },
      bench: { concurrency_levels: [1, -4] },
    }),
  )
  const result = await runCli(['run', '-c', file], { inProcess: true })
  assert.equal(result.code, 2)
  assert.ok(result.stderr.includes(`${file}: llm.base_url: expected an http(s) URL`), result.stderr)
  assert.ok(result.stderr.includes(`${file}: llm.timout_seconds: expected a known key`), result.stderr)
  assert.ok(
    result.stderr.includes(`${file}: bench.concurrency_levels[1]: expected a positive integer, got -4`),
    result.stderr,
  )
  assert.equal(result.stdout, '')
})

test('both seed configs verbatim plus flags run end to end; the API key appears in no output or file', {
  timeout: 90_000,
}, async () => {
  // The seeds point at https://host/api; flags override target and load, as a user would.
  const target = await startReplayServer(() => ({
    body: readSseFixture('openai_gpt4o_text_usage.sse'),
    chunkBytes: 64,
  }))
  const out = join(tempDir(), 'result')
  try {
    const result = await runCli(
      [
        'run',
        '-c',
        SEED_SETTINGS,
        '-c',
        SEED_TOML,
        '--base-url',
        target.url,
        '--levels',
        '1,2',
        '--requests',
        '3',
        '--warmup',
        '1',
        '--out',
        out,
      ],
      { env: { MY_API_KEY: SECRET } },
    )
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /conc\./)
    // settings.json names MY_API_KEY: the key is sent to the server as a bearer token...
    assert.ok(target.authorizations.length >= 1 + 2 + 6)
    assert.ok(target.authorizations.every((value) => value === `Bearer ${SECRET}`))
    // ... and the seed files' other settings are in force (model "m", max_tokens 512, usage asked for).
    const body = target.requests.at(-1) as { model: string; max_tokens: number; stream_options: unknown }
    assert.equal(body.model, 'm')
    assert.equal(body.max_tokens, 512)
    assert.deepEqual(body.stream_options, { include_usage: true })
    const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.deepEqual(summary.meta.load.levels, [1, 2])
    assert.equal(summary.meta.load.requests_per_level, 3)
    // The [client] settings sit together in meta.client, not in meta.load.
    assert.deepEqual([summary.meta.client.timeout_s, summary.meta.client.retry], [120, 0])
    assert.equal('timeout_s' in summary.meta.load || 'retry' in summary.meta.load, false)
    assert.deepEqual(summary.meta.server_metrics, { interval_s: 1 }, 'the default scrape interval')
    assert.equal(summary.levels[1].ok, 3)
    const files = filesUnder(out)
    assert.ok(files.some((f) => f.endsWith('requests.jsonl')))
    assertNoSecret({
      stdout: result.stdout,
      stderr: result.stderr,
      ...Object.fromEntries(files.map((f) => [f, readFileSync(f, 'utf8')])),
    })
  } finally {
    await target.close()
  }
})

test('a server that echoes the key in a 401 fails the preflight with exit 3, and the key is not shown', {
  timeout: 30_000,
}, async () => {
  const target = await startReplayServer(() => ({
    status: 401,
    contentType: 'application/json',
    body: Buffer.from(
      JSON.stringify({
        error: { message: `Incorrect API key provided: ${SECRET}.`, type: 'invalid_request_error' },
      }),
    ),
  }))
  const out = join(tempDir(), 'result')
  try {
    const result = await runCli(
      ['run', '--base-url', target.url, '--model', 'm', '--levels', '1', '--out', out],
      {
        env: { OPENAI_API_KEY: SECRET },
      },
    )
    assert.equal(result.code, 3)
    assert.match(
      result.stderr,
      /preflight failed: the API key was refused \(HTTP 401\): HTTP 401: Incorrect API key provided: \[redacted\]/,
    )
    assert.equal(result.stderr.split('preflight failed').length - 1, 1, 'the diagnosis is printed once')
    assertNoSecret({ stdout: result.stdout, stderr: result.stderr })
    // A failed preflight leaves no result folder, so no file that could hold the key.
    assert.equal(existsSync(out), false)
  } finally {
    await target.close()
  }
})

test('run against the simulator by flags alone, and --no-preflight skips the check', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 2 })
  const out = join(tempDir(), 'result')
  try {
    const result = await runCli([
      'run',
      '--base-url',
      sim.url,
      '--model',
      SIM_MODEL,
      '--levels',
      '2',
      '--requests',
      '4',
      '--warmup',
      '0',
      '--output-tokens',
      '5',
      '--no-preflight',
      '--json',
      '--out',
      out,
    ])
    assert.equal(result.code, 0, result.stderr)
    assert.doesNotMatch(result.stderr, /preflight/)
    const printed = JSON.parse(result.stdout)
    assert.equal(printed.levels[0].ok, 4)
    assert.equal(printed.levels[0].output_tokens, 20)
  } finally {
    await sim.close()
  }
})

test('demo: starts the simulator, runs a short gradient, prints the table and writes the folder', {
  timeout: 60_000,
}, async () => {
  const out = join(tempDir(), 'demo')
  const result = await runCli(['demo', '--levels', '1,4', '--duration', '0.5', '--out', out], {
    charts: true,
  })
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stdout, /conc\.[\s\S]*success[\s\S]*TTFT ms[\s\S]*TPOT ms[\s\S]*tok\/s/)
  assert.match(result.stdout, /│ 4 +│/)
  // One answer, in the same words on the terminal, in --json and in report.html's headline.
  const stored = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
  assert.ok(stored.answer !== undefined)
  // With a knee the answer opens the verdict; without one (a short demo may find none) the
  // saturation line says it, and no "Capacity:" line repeats it.
  if (stored.answer.from !== null)
    assert.ok(result.stdout.includes(`\n${stored.answer.text}\nSaturation: `), result.stdout)
  else assert.doesNotMatch(result.stdout, /^Capacity:/m)
  assert.match(stored.answer.text, /^(Capacity: \d+ concurrent streams? \(the knee[^)]*\)|No knee found: )/)
  assert.equal(stored.answer.value, stored.saturation?.value ?? null)
  assert.ok(readFileSync(join(out, 'report.html'), 'utf8').includes(escapeHtml(stored.answer.text)))
  assert.ok(existsSync(join(out, 'requests.jsonl')))
})

test('init writes settings.json and config.toml that load, and refuses to overwrite them', {
  timeout: 30_000,
}, async () => {
  const dir = tempDir()
  const first = await runCli(['init', '--dir', dir])
  assert.equal(first.code, 0, first.stderr)
  assert.ok(existsSync(join(dir, 'settings.json')) && existsSync(join(dir, 'config.toml')))
  assert.match(readFileSync(join(dir, 'config.toml'), 'utf8'), /^#/m)
  const again = await runCli(['init', '--dir', dir])
  assert.equal(again.code, 2)
  assert.match(again.stderr, /not overwriting/)
  // The skeletons are valid configs: --help after loading proves nothing, so run with an unreachable
  // target and --no-preflight off: the preflight must fail (exit 3), not the config (exit 2).
  const run = await runCli([
    'run',
    '-c',
    join(dir, 'settings.json'),
    '-c',
    join(dir, 'config.toml'),
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--timeout',
    '2',
    '--out',
    join(dir, 'r'),
  ])
  assert.equal(run.code, 3, run.stderr)
  assert.match(run.stderr, /preflight failed: unreachable host: ECONNREFUSED/)
})

test('Ctrl-C mid-run: stops issuing, drains, writes a partial result and exits 130', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 5 })
  const out = join(tempDir(), 'result')
  try {
    const {
      child,
      exited,
      stderr: stderrSoFar,
    } = spawnCli([
      'run',
      '--base-url',
      sim.url,
      '--model',
      SIM_MODEL,
      '--levels',
      '1,2,4',
      '--duration',
      '3',
      '--warmup',
      '0',
      '--output-tokens',
      '20',
      '--out',
      out,
    ])
    // Interrupt during the second level: once one of its requests is on disk, not after a fixed delay
    // that a busy machine may stretch past the level's 3 s.
    const recordsFile = join(out, 'requests.jsonl')
    await waitUntil(
      () => existsSync(recordsFile) && readFileSync(recordsFile, 'utf8').includes('"level":2,'),
      'a record of level 2 on disk',
    )
    child.kill('SIGINT')
    const code = await exited
    assert.equal(code, 130, stderrSoFar())
    assert.match(stderrSoFar(), /interrupt: no new requests/)
    const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(summary.meta.partial, true)
    assert.deepEqual(
      summary.levels.map((level: { value: number }) => level.value),
      [1, 2],
    )
    const { records, tornLastLine } = readRecords(join(out, 'requests.jsonl'))
    assert.equal(tornLastLine, false)
    const measured = records.filter((r) => r.phase === 'measure')
    assert.equal(measured.length, summary.levels[0].requests + summary.levels[1].requests)
    assert.ok(
      measured.every((r) => r.error === null),
      'in-flight requests finished, not cut',
    )
    // Level 2 was cut short of its 3 s (interrupted a few hundred ms in; a full level runs 3 s and drains).
    assert.ok(summary.levels[1].duration_s < 3, `level 2 ran ${summary.levels[1].duration_s} s`)
    // The drawing (seconds of CPU, several times that under load) is left to `report`, and said so.
    assert.equal(existsSync(join(out, 'report.html')), false)
    assert.ok(existsSync(join(out, 'summary.md')))
    assert.match(stderrSoFar(), /charts and report.html not drawn after the interrupt .*`llmbench report /)
    assert.doesNotMatch(stderrSoFar(), /^Report: /m)
  } finally {
    await sim.close()
  }
})

test('a second Ctrl-C exits at once, with every finished record on disk; report tolerates a torn last line', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 20 })
  const out = join(tempDir(), 'result')
  try {
    const {
      child,
      exited,
      stderr: stderrSoFar,
    } = spawnCli([
      'run',
      '--base-url',
      sim.url,
      '--model',
      SIM_MODEL,
      '--levels',
      '8',
      '--duration',
      '30',
      '--warmup',
      '0',
      '--output-tokens',
      '100',
      '--out',
      out,
    ])
    // Let some 2 s requests finish, then interrupt twice: the second must not wait for the drain.
    const recordsPath = join(out, 'requests.jsonl')
    const measuredOnDisk = (): number =>
      existsSync(recordsPath)
        ? readRecords(recordsPath).records.filter((r) => r.phase === 'measure').length
        : 0
    await waitUntil(() => measuredOnDisk() >= 8, '8 measured records on disk')
    child.kill('SIGINT')
    await waitUntil(() => /interrupt: no new requests/.test(stderrSoFar()), 'the first interrupt answered')
    const secondAt = Date.now()
    child.kill('SIGINT')
    const code = await exited
    assert.equal(code, 130, stderrSoFar())
    assert.ok(Date.now() - secondAt < 1500, 'exited at once, not after the 2 s drain')
    assert.match(stderrSoFar(), /second interrupt: exiting now/)
    const { records, tornLastLine } = readRecords(join(out, 'requests.jsonl'))
    assert.equal(tornLastLine, false)
    assert.ok(
      records.filter((r) => r.phase === 'measure').length >= 8,
      `${records.length} finished records on disk`,
    )

    // A crash mid-write: the last line cut short. report reads the rest and says so.
    const file = join(out, 'requests.jsonl')
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"seq":99,"lev`)
    // The summary stays as the second interrupt left it (written before the first level ended).
    const report = await runCli(['report', out])
    assert.equal(report.code, 0, report.stderr)
    assert.match(report.stderr, /last line of requests.jsonl was cut short/)
  } finally {
    await sim.close()
  }
})

test('Ctrl-C: requests still in flight after the 5 s grace are cut and recorded as interrupted', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 100 })
  const out = join(tempDir(), 'result')
  try {
    // 200 tokens at 100 ms: every request would take 20 s.
    const { child, exited } = spawnCli([
      'run',
      '--base-url',
      sim.url,
      '--model',
      SIM_MODEL,
      '--levels',
      '3',
      '--requests',
      '3',
      '--warmup',
      '0',
      '--output-tokens',
      '200',
      '--no-preflight',
      '--out',
      out,
    ])
    await waitUntil(() => sim.stats().running === 3, 'the 3 requests in flight')
    const interruptedAt = Date.now()
    child.kill('SIGINT')
    assert.equal(await exited, 130)
    const took = Date.now() - interruptedAt
    // Cut at the 5 s grace, not at the requests' natural end (~20 s): the upper bound leaves a busy
    // machine seconds to write the partial result and exit (9.1 s seen at load average 16).
    assert.ok(took >= 4500 && took < 15_000, `exited ${took} ms after Ctrl-C (grace 5 s)`)
    const records = readRecords(join(out, 'requests.jsonl')).records.filter((r) => r.phase === 'measure')
    assert.equal(records.length, 3)
    for (const record of records) {
      assert.equal(record.error?.class, 'other')
      assert.match(record.error?.message ?? '', /interrupted: still in flight 5 s after Ctrl-C/)
      assert.ok(record.chunks > 30, 'tokens received before the cut are kept')
    }
    const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(summary.meta.partial, true)
    assert.equal(summary.levels[0].errors.other, 3)
  } finally {
    await sim.close()
  }
})

test('a live progress line is drawn on a terminal, and never in a pipe', { timeout: 60_000 }, async () => {
  const out = join(tempDir(), 'tty')
  // The same demo in a pipe, side by side with the terminal's: only what each prints is compared.
  const pipedRun = runCli(['demo', '--levels', '2', '--duration', '1', '--out', join(tempDir(), 'pipe')])
  // `script` runs the CLI on a pseudo-terminal, as a person would see it.
  const tty = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      'script',
      [
        '-qec',
        `${process.execPath} ${CLI} ${cliArgs(['demo', '--levels', '2', '--duration', '1.5', '--out', out]).join(' ')}`,
        '/dev/null',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let text = ''
    child.stdout.on('data', (data: Buffer) => {
      text += data.toString()
    })
    child.once('exit', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`script exited ${code}: ${text}`)),
    )
  })
  // Each redraw returns to the line start and clears it (CR, then ESC [K).
  assert.ok(tty.includes('\r\u001b[Klevel 2: '), JSON.stringify(tty.slice(0, 400)))
  assert.match(tty, /level 2: \d\/1\.5 s, \d+ requests, TTFT p50 \d+ ms/)
  const piped = await pipedRun
  assert.equal(piped.code, 0)
  assert.ok(!piped.stderr.includes('\r'), 'no carriage returns in a pipe')
  assert.match(piped.stderr, /^level 2: \d+ requests, 0 failed/m)
})
