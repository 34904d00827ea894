/**
 * Start-up cost of the CLI, side by side in one run (compare differences; the machine is shared and
 * noisy): wall time and peak RSS of bare `node -e 0` and of llmbench's cheapest commands, each run
 * REPEATS times in turn (round robin, so a burst of load hits every command alike), medians shown
 * with their difference to bare node. The targets of issue 17: --help and run --help within 150 ms
 * of bare node and under 80 MB.
 *
 * Peak RSS is the child's VmHWM (/proc/self/status; ru_maxrss where there is no /proc), read by a
 * module preloaded with --import into every child, bare node included, and written to fd 3 at exit.
 *
 * Run: npm run bench:startup   (builds dist/ first; about 20 s)   REPEATS=15 for tighter medians.
 * BENCH_STARTUP_BASELINE=../main/dist/cli/main.js npm run bench:startup adds another build's
 * `run --help` and `--version` to the same rounds (a change's effect, side by side).
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { percentileOfSorted } from '../src/metrics/distribution.js'

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url))
const REPEATS = Math.max(1, Number(process.env.REPEATS ?? 9))
const TARGET_EXTRA_MS = 150
const TARGET_PEAK_MB = 80

/** Preloaded into each child: its peak RSS in KiB to fd 3 when it exits. */
const PEAK_PROBE = `data:text/javascript,${encodeURIComponent(`
import { readFileSync, writeSync } from 'node:fs'
process.on('exit', () => {
  let kib
  try { kib = Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) }
  catch { kib = process.resourceUsage().maxRSS }
  try { writeSync(3, String(kib)) } catch {}
})`)}`

interface Case {
  label: string
  args: string[]
  /** Commands the issue sets targets for. */
  targeted: boolean
}

const CASES: Case[] = [
  { label: 'node -e 0', args: ['-e', '0'], targeted: false },
  { label: 'llmbench --help', args: [CLI, '--help'], targeted: true },
  { label: 'llmbench run --help', args: [CLI, 'run', '--help'], targeted: true },
  { label: 'llmbench --version', args: [CLI, '--version'], targeted: false },
  ...baselineCases(process.env.BENCH_STARTUP_BASELINE),
]

/** Another build's `run --help` and `--version`, run in the same rounds as this one's. */
function baselineCases(cli: string | undefined): Case[] {
  if (cli === undefined || cli === '') return []
  return [
    { label: 'baseline run --help', args: [cli, 'run', '--help'], targeted: false },
    { label: 'baseline --version', args: [cli, '--version'], targeted: false },
  ]
}

interface Sample {
  ms: number
  peakMb: number
}

function runOnce(testCase: Case): Sample {
  const started = process.hrtime.bigint()
  const child = spawnSync(process.execPath, ['--import', PEAK_PROBE, ...testCase.args], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    timeout: 30_000,
  })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (child.status !== 0) {
    throw new Error(`${testCase.label} exited ${child.status ?? child.signal}: ${String(child.stderr)}`)
  }
  const kib = Number(String(child.output[3] ?? ''))
  if (!Number.isFinite(kib) || kib <= 0) throw new Error(`${testCase.label}: no peak RSS reported`)
  return { ms, peakMb: kib / 1024 }
}

const median = (values: number[]): number =>
  percentileOfSorted(
    [...values].sort((a, b) => a - b),
    50,
  ) ?? Number.NaN

function main(): void {
  readFileSync(CLI) // a clear ENOENT when dist/ is missing, before any timing
  const samples = new Map<Case, Sample[]>(CASES.map((c) => [c, []]))
  for (const c of CASES) runOnce(c) // warm the file cache once, unmeasured
  for (let round = 0; round < REPEATS; round++) {
    for (const c of CASES) samples.get(c)?.push(runOnce(c))
  }
  const bare = CASES[0] as Case
  const bareMs = median((samples.get(bare) ?? []).map((s) => s.ms))
  const bareMb = median((samples.get(bare) ?? []).map((s) => s.peakMb))
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
  console.log(`start-up, median of ${REPEATS} runs each, round robin; ${cpus().length} cores, load ${load}`)
  console.log(
    `node ${process.version}; targets: --help and run --help ≤ +${TARGET_EXTRA_MS} ms and < ${TARGET_PEAK_MB} MB\n`,
  )
  const header = ['command', 'wall ms', '+ms vs node', 'peak MB', '+MB vs node', 'target']
  const rows = CASES.map((c) => {
    const ms = median((samples.get(c) ?? []).map((s) => s.ms))
    const mb = median((samples.get(c) ?? []).map((s) => s.peakMb))
    const met = ms - bareMs <= TARGET_EXTRA_MS && mb < TARGET_PEAK_MB
    return [
      c.label,
      ms.toFixed(0),
      c === bare ? '' : `+${(ms - bareMs).toFixed(0)}`,
      mb.toFixed(1),
      c === bare ? '' : `+${(mb - bareMb).toFixed(1)}`,
      c.targeted ? (met ? 'met' : 'MISSED') : '',
    ]
  })
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  for (const row of [header, ...rows]) {
    console.log(
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join('  '),
    )
  }
}

main()
