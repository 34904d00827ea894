/**
 * End-of-run CPU (issue 40): what a run costs after its last stream ended (the report, its charts,
 * the model, the files), side by side for this build and others, in turns.
 *
 * One truth server (bench/fidelity/truth-server.ts, its own process) streams 64 tokens per request,
 * one every 2 ms. Each build runs `run --levels 64 --requests N --workers 1` as a user would (drift
 * control on); while it runs, its CPU (all threads, /proc/PID/stat utime+stime) is sampled every
 * 25 ms together with the server's open streams (GET /open). The end of the run is the CPU at exit
 * (/usr/bin/time, user+sys) minus the CPU at the last sample that saw a stream open: everything
 * after the streaming, at most one sampling interval early.
 *
 *   npm run bench:end-of-run                    # 262144 events, 3 turns (builds dist/ first)
 *   BENCH_EOR_EVENTS=65536 BENCH_EOR_REPEATS=1 npm run bench:end-of-run
 *   BENCH_EOR_BASELINE="before=/path/to/dist/cli/main.js" npm run bench:end-of-run
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTruthServer } from '../fidelity/start-truth-server.js'
import { runArgs } from './run-args.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'dist/cli/main.js')
const TIME = '/usr/bin/time'
const STREAMS = 64
const TOKENS = 64
const GAP_MS = 2
const SAMPLE_MS = 25
const EVENTS = Number(process.env.BENCH_EOR_EVENTS ?? 262_144)
const REPEATS = Number(process.env.BENCH_EOR_REPEATS ?? 3)
/** Clock ticks per second of /proc/PID/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_S = 100

interface Build {
  label: string
  cli: string
}

function builds(): Build[] {
  const others = (process.env.BENCH_EOR_BASELINE ?? '')
    .split(',')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const at = entry.indexOf('=')
      return at < 0
        ? { label: 'baseline', cli: entry }
        : { label: entry.slice(0, at), cli: entry.slice(at + 1) }
    })
  return [{ label: 'this build', cli: CLI }, ...others]
}

/** utime + stime of a process (all its threads) in seconds; null once it is gone. */
function cpuOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S
  } catch {
    return null
  }
}

async function openStreams(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/open`)
  return ((await response.json()) as { open: number }).open
}

interface Turn {
  totalS: number
  endS: number
}

async function runOnce(build: Build, port: number): Promise<Turn> {
  const out = mkdtempSync(join(tmpdir(), 'llmbench-eor-'))
  const timeFile = join(out, 'time')
  const args = runArgs({
    cli: build.cli,
    port,
    streams: STREAMS,
    requests: Math.round(EVENTS / TOKENS),
    tokens: TOKENS,
    workers: '1',
    out: join(out, 'run'),
    json: false,
  })
  const time = spawn(TIME, ['-o', timeFile, '-f', '%U %S', process.execPath, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    cwd: ROOT,
  })
  const exited = new Promise<number | null>((resolve) => time.once('exit', resolve))
  let done = false
  void exited.then(() => {
    done = true
  })
  // The node child of /usr/bin/time: the only child of its pid.
  let pid: number | null = null
  let lastOpenCpu = Number.NaN
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS))
    if (pid === null) pid = childOf(time.pid ?? -1)
    if (pid === null) continue
    const cpu = cpuOf(pid)
    if (cpu === null) continue
    if ((await openStreams(port)) > 0) lastOpenCpu = cpu
  }
  const code = await exited
  try {
    if (code !== 0) throw new Error(`${build.label} exited ${code}`)
    const [user, system] =
      readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? []
    const totalS = (user ?? 0) + (system ?? 0)
    return { totalS, endS: totalS - lastOpenCpu }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

function childOf(parent: number): number | null {
  try {
    const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim()
    return children === '' ? null : Number(children.split(' ')[0])
  } catch {
    return null
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

async function main(): Promise<void> {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const server = await startTruthServer(port, GAP_MS, GAP_MS, TOKENS)
  const turns = new Map<string, Turn[]>()
  try {
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      for (const build of builds()) {
        const turn = await runOnce(build, port)
        turns.set(build.label, [...(turns.get(build.label) ?? []), turn])
        process.stderr.write(
          `${build.label}: total ${turn.totalS.toFixed(2)} s, end of run ${turn.endS.toFixed(2)} s\n`,
        )
      }
    }
  } finally {
    server.kill()
  }
  console.log(
    `\n${EVENTS} events, ${STREAMS} streams, ${REPEATS} turns; ${cpus()[0]?.model ?? '?'} x${cpus().length}, Node ${process.version}, load ${loadavg()[0]?.toFixed(1)}\n`,
  )
  console.log('| build | end-of-run CPU s (each turn) | median | total CPU s (median) |')
  console.log('| --- | --- | --- | --- |')
  for (const [label, list] of turns) {
    const ends = list.map((turn) => turn.endS)
    console.log(
      `| ${label} | ${ends.map((s) => s.toFixed(2)).join(', ')} | ${median(ends).toFixed(2)} | ${median(list.map((turn) => turn.totalS)).toFixed(2)} |`,
    )
  }
}

await main()
