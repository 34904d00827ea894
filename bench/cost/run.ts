/**
 * Client cost benchmark (issue 17): CPU per streamed event and memory per stream, side by side in
 * one run. The machine is shared: read the ratios to the floor, not the absolute figures.
 *
 * One server, its own process (bench/fidelity/truth-server.ts: pre-built chunked frames on a raw
 * socket, so its CPU is neither the clients' nor a bottleneck), streams TOKENS chat chunks per
 * request, one every GAP_MS. Each client runs in its own process under /usr/bin/time (CPU of all
 * its threads, user + system, and peak RSS = VmHWM):
 *   - floor:       bench/cost/floor-client.mjs, raw node:net that stamps reads and finds the end of
 *                  a chunked body, nothing more;
 *   - undici, reads stamped only: the same through an undici Client (a diagnostic row: the HTTP
 *                  layer's share, so the rest of llmbench's distance to the floor is its own work);
 *   - h1 client, reads stamped only: the same through src/client/h1/'s pool, which llmbench's
 *                  streaming requests use (the HTTP layer's share now);
 *   - llmbench's client alone: bench/cost/send-request-client.mjs, dist/client's pool and sendRequest
 *                  on one thread with nothing after (a diagnostic row: the client's own per-event
 *                  cost, apart from the run around it);
 *   - llmbench --workers 1 and --workers auto (dist/cli/main.js, built first);
 *   - a hand-written asyncio + httpx script (bench/fidelity/article_client.py), when `python3 -c 'import httpx'` works.
 * Marginal CPU per event = (CPU of a big run - CPU of a one-request run) / (events of the big run -
 * events of the one-request run), so start-up and shutdown (modules, workers, the report) are not
 * counted. Events are the token chunks the server wrote (its /stats). The clients take turns in
 * every repeat and the table shows each one's median.
 *
 * Then peak RSS per open stream: the peak at 1024 streams minus the peak at 1, per extra stream
 * (the floor, the h1 client's reads-only row, llmbench --workers 1 and the baseline build when
 * given), against a server that sends a token every 20 ms.
 *
 *   npm run bench:cost                     # 64 streams, ~256k events per big run, 3 repeats
 *   npm run bench:cost -- --quick          # ~64k events, 1 repeat, no 1024-stream memory cell
 *   npm run bench:cost -- --memory-only    # only the memory per stream
 *   BENCH_COST_EVENTS=131072 BENCH_COST_REPEATS=5 npm run bench:cost
 *   npm run bench:cost -- --quick --record bench/cost/recorded-quick.json
 *       writes this run's rows (µs per event, × floor, peak RSS) to that file, to compare later runs with
 *   npm run bench:cost -- --quick --against bench/cost/recorded-quick.json
 *       compares each row with the recorded one and says by how much it moved (× floor first: the
 *       machine's speed and load move the µs of every row alike, the ratio much less)
 *   BENCH_COST_BASELINE=../main/dist/cli/main.js npm run bench:cost -- --quick
 *       adds another build's --workers 1 (a change's effect, side by side); several, comma-separated,
 *       each `label=path` to name its row; BENCH_COST_NO_AUTO=1 skips auto
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTruthServer } from '../fidelity/start-truth-server.js'
import { runArgs } from './run-args.js'

const QUICK = process.argv.includes('--quick')
/** Only the memory-per-stream table (no CPU table). */
const MEMORY_ONLY = process.argv.includes('--memory-only')
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'dist/cli/main.js')
const FLOOR = join(ROOT, 'bench/cost/floor-client.mjs')
const UNDICI_FLOOR = join(ROOT, 'bench/cost/undici-floor-client.mjs')
const SEND_REQUEST = join(ROOT, 'bench/cost/send-request-client.mjs')
const H1_FLOOR = join(ROOT, 'bench/cost/h1-floor-client.mjs')
const ARTICLE = join(ROOT, 'bench/fidelity/article_client.py')
const PYTHON = '/usr/bin/python3'
const TIME = '/usr/bin/time'
const STREAMS = 64
const TOKENS = 64
const GAP_MS = 2
const EVENTS = Number(process.env.BENCH_COST_EVENTS ?? (QUICK ? 65_536 : 262_144))
const REPEATS = Number(process.env.BENCH_COST_REPEATS ?? (QUICK ? 1 : 3))
/** `--record FILE` / `--against FILE`: this run's rows written to, or compared with, a recorded figure file. */
const RECORD = flagValue('--record')
const AGAINST = flagValue('--against')
const MEMORY_STREAMS = 1024
const MEMORY_GAP_MS = 20

interface Usage {
  cpuS: number
  peakRssMiB: number
  /** Peak RSS while the server had all the run's streams open (NaN when not sampled). */
  streamingPeakMiB: number
  events: number
}

interface Client {
  name: string
  /** The command for `streams` streams and about `events` events in all. */
  command(port: number, streams: number, events: number): string[]
}

function llmbench(workers: string, cli = CLI, label = 'llmbench'): Client {
  return {
    name: `${label} --workers ${workers}`,
    command: (port, streams, events) => [
      process.execPath,
      ...runArgs({
        cli,
        port,
        streams,
        requests: Math.round(events / TOKENS),
        tokens: TOKENS,
        workers,
        out: mkdtempSync(join(tmpdir(), 'llmbench-cost-')),
        json: true,
      }),
    ],
  }
}

/**
 * Other builds' --workers 1, side by side: BENCH_COST_BASELINE is a comma-separated list of
 * cli/main.js paths, each optionally `label=path` (the label names its row; 'baseline build' else).
 */
function baselineClients(value: string | undefined): Client[] {
  if (value === undefined || value === '') return []
  return value.split(',').map((entry) => {
    const at = entry.indexOf('=')
    return at < 0
      ? llmbench('1', entry, 'baseline build')
      : llmbench('1', entry.slice(at + 1), entry.slice(0, at))
  })
}

/** A plain Node script taking PORT STREAMS REQUESTS (the floor clients). */
function script(name: string, path: string): Client {
  return {
    name,
    command: (port, streams, events) => [
      process.execPath,
      path,
      String(port),
      String(streams),
      String(Math.max(1, Math.round(events / TOKENS))),
    ],
  }
}

const FLOOR_CLIENT = script('floor (raw node:net)', FLOOR)
/** The floor's requests through undici: what the HTTP layer costs (see undici-floor-client.mjs). */
const UNDICI_FLOOR_CLIENT = script('undici, reads stamped only', UNDICI_FLOOR)
/** llmbench's client (dist/client) alone on one thread: no workers, tokenizer, records or report. */
const SEND_REQUEST_CLIENT = script('llmbench client alone (one thread)', SEND_REQUEST)
/** The same through the h1 client (src/client/h1/), what llmbench's streaming requests use. */
const H1_FLOOR_CLIENT = script('h1 client, reads stamped only', H1_FLOOR)

/** The asyncio + httpx script (article_client.py) runs for a duration: the time the server needs to send `events`. */
const ARTICLE_CLIENT: Client = {
  name: 'article asyncio+httpx',
  command: (port, streams, events) => [
    PYTHON,
    ARTICLE,
    `http://127.0.0.1:${port}/v1/chat/completions`,
    String(streams),
    String(Math.max(0.2, (events / streams) * GAP_MS * 1e-3)),
  ],
}

function httpxMissing(): string | null {
  try {
    execFileSync(PYTHON, ['-c', 'import httpx'], { stdio: 'ignore' })
    return null
  } catch {
    return `skipped: \`${PYTHON} -c 'import httpx'\` fails (install python3-httpx to include it)`
  }
}

/**
 * The client's peak RSS while it streams, not over its whole life: a run's report is drawn after
 * its streams end, and its peak would hide theirs. The kernel's own peak (VmHWM) is reset when the
 * server first has all `streams` open (GET /open; `echo 5 > clear_refs`), and the peak is VmHWM as
 * read at the last poll (every 20 ms) that saw any stream open; a moment with none (a closed loop's
 * turn-around between requests) ends it only after 250 ms.
 */
const STREAMS_ENDED_AFTER_MS = 250

class StreamingPeak {
  private pid: number | null = null
  private state: 'before' | 'open' | 'done' = 'before'
  private peakKiB = 0
  private noneOpenSince: number | null = null
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly timePid: number,
    private readonly port: number,
    private readonly streams: number,
  ) {
    this.timer = setInterval(() => void this.poll(), 20)
  }

  get mib(): number {
    return this.peakKiB / 1024
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private async poll(): Promise<void> {
    if (this.state === 'done') return
    try {
      // The client is /usr/bin/time's child.
      this.pid ??= Number(
        readFileSync(`/proc/${this.timePid}/task/${this.timePid}/children`, 'utf8').split(' ')[0],
      )
      const { open } = (await (await fetch(`http://127.0.0.1:${this.port}/open`)).json()) as { open: number }
      if (this.state === 'before' && open >= this.streams) {
        writeFileSync(`/proc/${this.pid}/clear_refs`, '5')
        this.state = 'open'
      } else if (this.state === 'open') {
        if (open > 0) {
          this.peakKiB = Math.max(this.peakKiB, statusKiB(this.pid, 'VmHWM'))
          this.noneOpenSince = null
        } else {
          this.noneOpenSince ??= performance.now()
          if (performance.now() - this.noneOpenSince > STREAMS_ENDED_AFTER_MS) this.state = 'done'
        }
      }
    } catch {
      // Not started yet, or already ended: the peak read so far stands.
    }
  }
}

function statusKiB(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`))
  return Number(line?.split(/\s+/)[1] ?? 0)
}

/**
 * Runs a command to its end under /usr/bin/time: CPU of all its threads and its peak RSS; with
 * `streaming`, also its peak while the server has that many streams open.
 */
function timed(
  command: string[],
  streaming?: { port: number; streams: number },
): Promise<{ cpuS: number; peakRssMiB: number; streamingPeakMiB: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-cost-time-'))
  const file = join(dir, 'time')
  return new Promise((resolve, reject) => {
    const child = spawn(TIME, ['-o', file, '-f', '%U %S %M', ...command], {
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: ROOT,
    })
    const peak =
      streaming === undefined || child.pid === undefined
        ? null
        : new StreamingPeak(child.pid, streaming.port, streaming.streams)
    let stderr = ''
    child.stderr?.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.once('exit', (code) => {
      peak?.stop()
      try {
        if (code !== 0) throw new Error(`${command.join(' ')} exited ${code}: ${stderr.slice(-2000)}`)
        const [user, system, maxKiB] =
          readFileSync(file, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? []
        resolve({
          cpuS: (user ?? 0) + (system ?? 0),
          peakRssMiB: (maxKiB ?? 0) / 1024,
          streamingPeakMiB: peak?.mib ?? Number.NaN,
        })
      } catch (error) {
        reject(error)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })
}

/** Token chunks the server wrote since the last call. */
async function serverEvents(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/stats`)
  return ((await response.json()) as { events: number }).events
}

async function measure(
  port: number,
  client: Client,
  streams: number,
  events: number,
  sampleStreaming = false,
): Promise<Usage> {
  await serverEvents(port)
  const usage = await timed(
    client.command(port, streams, events),
    sampleStreaming ? { port, streams } : undefined,
  )
  return { ...usage, events: await serverEvents(port) }
}

function flagValue(flag: string): string | null {
  const at = process.argv.indexOf(flag)
  if (at < 0) return null
  const value = process.argv[at + 1]
  if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a file`)
  return value
}

/** One client's row as recorded: its median CPU per event, that over the floor's, its median peak RSS. */
interface RecordedRow {
  micros: number
  timesFloor: number
  peakRssMiB: number
}

interface Recorded {
  recorded_at: string
  commit: string
  machine: string
  events: number
  repeats: number
  rows: Record<string, RecordedRow>
}

function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
}

const moved = (now: number, then: number): string =>
  Number.isFinite(now) && Number.isFinite(then) && then > 0
    ? `${now >= then ? '+' : ''}${((now / then - 1) * 100).toFixed(0)}%`
    : '-'

/** Each row against the recorded figure file: by how much its × floor, µs per event and peak RSS moved. */
function compareWithRecorded(rows: Record<string, RecordedRow>, path: string): void {
  const recorded = JSON.parse(readFileSync(path, 'utf8')) as Recorded
  console.log(
    `
Against ${path} (recorded ${recorded.recorded_at} at ${recorded.commit}, ${recorded.machine}, ~${recorded.events} events, ${recorded.repeats} repeat(s)):
`,
  )
  console.log(
    '| client | × floor now | recorded | moved | µs per event now | recorded | moved | peak RSS MiB now | recorded | moved |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const [name, row] of Object.entries(rows)) {
    const then = recorded.rows[name]
    if (then === undefined) {
      console.log(
        `| ${name} | ${fixed(row.timesFloor, 2)} | not recorded | - | ${fixed(row.micros, 1)} | - | - | ${fixed(row.peakRssMiB, 0)} | - | - |`,
      )
      continue
    }
    console.log(
      `| ${name} | ${fixed(row.timesFloor, 2)} | ${fixed(then.timesFloor, 2)} | ${moved(row.timesFloor, then.timesFloor)} ` +
        `| ${fixed(row.micros, 1)} | ${fixed(then.micros, 1)} | ${moved(row.micros, then.micros)} ` +
        `| ${fixed(row.peakRssMiB, 0)} | ${fixed(then.peakRssMiB, 0)} | ${moved(row.peakRssMiB, then.peakRssMiB)} |`,
    )
  }
  for (const name of Object.keys(recorded.rows))
    if (rows[name] === undefined)
      console.log(
        `| ${name} | not run | ${fixed(recorded.rows[name]?.timesFloor ?? Number.NaN, 2)} | - | | | | | | |`,
      )
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

const fixed = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '-')

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('build first: npm run build')
  const skipArticle = httpxMissing()
  const baselines = baselineClients(process.env.BENCH_COST_BASELINE)
  const clients = [
    FLOOR_CLIENT,
    UNDICI_FLOOR_CLIENT,
    H1_FLOOR_CLIENT,
    SEND_REQUEST_CLIENT,
    llmbench('1'),
    ...baselines,
    ...(process.env.BENCH_COST_NO_AUTO === '1' ? [] : [llmbench('auto')]),
    ...(skipArticle === null ? [ARTICLE_CLIENT] : []),
  ]
  console.log(
    `Client cost benchmark: ${cpus()[0]?.model ?? 'cpu'} x${availableParallelism()}, Node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  console.log(
    `server (own process): ${STREAMS} streams, ${TOKENS} tokens per request, one every ${GAP_MS} ms; big run ~${EVENTS} events; ${REPEATS} repeat(s), clients interleaved, medians\n`,
  )
  const port = 20000 + Math.floor(Math.random() * 20000)
  const perEvent = new Map<string, number[]>()
  const peak = new Map<string, number[]>()
  const streamingPeak = new Map<string, number[]>()
  let server = await startTruthServer(port, GAP_MS, GAP_MS, TOKENS)
  try {
    for (let repeat = 0; repeat < (MEMORY_ONLY ? 0 : REPEATS); repeat++) {
      for (const client of clients) {
        const one = await measure(port, client, 1, 1)
        const big = await measure(port, client, STREAMS, EVENTS, true)
        const micros = ((big.cpuS - one.cpuS) * 1e6) / (big.events - one.events)
        perEvent.set(client.name, [...(perEvent.get(client.name) ?? []), micros])
        peak.set(client.name, [...(peak.get(client.name) ?? []), big.peakRssMiB])
        streamingPeak.set(client.name, [...(streamingPeak.get(client.name) ?? []), big.streamingPeakMiB])
        process.stderr.write(
          `  repeat ${repeat + 1}: ${client.name}: ${fixed(micros, 2)} µs/event (${big.events} events, ${fixed(big.cpuS, 2)} s CPU; one request: ${fixed(one.cpuS, 2)} s), peak RSS ${fixed(big.peakRssMiB, 0)} MiB (${fixed(big.streamingPeakMiB, 0)} while streaming)\n`,
        )
      }
    }
    if (!MEMORY_ONLY) {
      const floorMicros = median(perEvent.get(FLOOR_CLIENT.name) ?? [])
      const floorRss = median(peak.get(FLOOR_CLIENT.name) ?? [])
      console.log(
        `| client | CPU per event µs | × floor | peak RSS MiB (${STREAMS} streams) | × floor | peak RSS MiB while streaming |`,
      )
      console.log('| --- | --- | --- | --- | --- | --- |')
      const rows: Record<string, RecordedRow> = {}
      for (const client of clients) {
        const micros = median(perEvent.get(client.name) ?? [])
        const rss = median(peak.get(client.name) ?? [])
        const streamingRss = median(streamingPeak.get(client.name) ?? [])
        rows[client.name] = { micros, timesFloor: micros / floorMicros, peakRssMiB: rss }
        console.log(
          `| ${client.name} | ${fixed(micros, 1)} | ${fixed(micros / floorMicros, 2)} | ${fixed(rss, 0)} | ${fixed(rss / floorRss, 2)} | ${fixed(streamingRss, 0)} |`,
        )
      }
      if (AGAINST !== null) compareWithRecorded(rows, AGAINST)
      if (RECORD !== null) {
        const recorded: Recorded = {
          recorded_at: new Date().toISOString(),
          commit: commitOf(),
          machine: `${cpus()[0]?.model ?? 'cpu'} x${availableParallelism()}, Node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`,
          events: EVENTS,
          repeats: REPEATS,
          rows,
        }
        writeFileSync(RECORD, `${JSON.stringify(recorded, null, 2)}\n`)
        console.log(`\nrecorded in ${RECORD}`)
      }
    }
    if (skipArticle !== null) console.log(`\narticle asyncio+httpx: ${skipArticle}`)
    if (QUICK) return
    server.kill('SIGTERM')
    server = await startTruthServer(port, MEMORY_GAP_MS, MEMORY_GAP_MS, TOKENS)
    console.log(
      `\nPeak RSS per open stream: (peak at ${MEMORY_STREAMS} streams - peak at 1) / ${MEMORY_STREAMS - 1}; a token every ${MEMORY_GAP_MS} ms.\n` +
        "Whole run: the process's peak over its life (the report included). While streaming: its peak while the\n" +
        "server had all the run's streams open, the figure that grows with streams.\n",
    )
    console.log(
      '| client | whole run at 1 MiB | at 1024 MiB | KiB per stream | while streaming at 1 MiB | at 1024 MiB | KiB per stream |',
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- |')
    const memoryClients = [FLOOR_CLIENT, H1_FLOOR_CLIENT, llmbench('1')]
    memoryClients.push(...baselines)
    const perStream = (one: number, many: number): number => ((many - one) * 1024) / (MEMORY_STREAMS - 1)
    for (const client of memoryClients) {
      const one = await measure(port, client, 1, TOKENS, true)
      const many = await measure(port, client, MEMORY_STREAMS, MEMORY_STREAMS * TOKENS * 2, true)
      console.log(
        `| ${client.name} | ${fixed(one.peakRssMiB, 0)} | ${fixed(many.peakRssMiB, 0)} | ${fixed(perStream(one.peakRssMiB, many.peakRssMiB), 1)} ` +
          `| ${fixed(one.streamingPeakMiB, 0)} | ${fixed(many.streamingPeakMiB, 0)} | ${fixed(perStream(one.streamingPeakMiB, many.streamingPeakMiB), 1)} |`,
      )
    }
  } finally {
    server.kill('SIGTERM')
  }
}

await main()
