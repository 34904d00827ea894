/**
 * Fidelity benchmark: how much TTFT does the client itself add, side by side in one run?
 *
 * A ground-truth server (its own process, truth-server.ts) streams with a fixed first-token delay
 * and inter-token gap and records when it really wrote each first token. Each client runs against
 * it in its own process; we compare the TTFT percentiles the client reports with the server's
 * true ones. Clients: llmbench with --workers 1 and --workers auto, and a hand-written asyncio +
 * httpx benchmark loop of the usual kind (article_client.py, Debian's python3-httpx). llmbench warms
 * up one request per stream first (excluded from its figures, as it would be in a real run); the
 * script has no warm-up, as such scripts usually have none. The server's truth includes the warm-up requests, all of
 * them ~FIRST_TOKEN_MS like the rest.
 *
 *   npm run bench:fidelity                 # full table (about 5 minutes)
 *   npm run bench:fidelity -- --quick      # fewer cells, shorter (about 1.5 minutes)
 *
 * The machine is shared and noisy: read the differences within one run, not absolute figures.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { availableParallelism, cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { percentileOfSorted } from '../../src/metrics/distribution.js'
import { startTruthServer } from './start-truth-server.js'

const QUICK = process.argv.includes('--quick')
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'dist/cli/main.js')
const PYTHON = '/usr/bin/python3'
const FIRST_TOKEN_MS = 100
const GAP_MS = 20
const TOKENS = 64
const CELL_SECONDS = QUICK ? 4 : 6
/** BENCH_FIDELITY_LEVELS=1,1024 measures only those levels (and skips the flood). */
const ONLY_LEVELS = process.env.BENCH_FIDELITY_LEVELS
const LEVELS =
  ONLY_LEVELS !== undefined ? ONLY_LEVELS.split(',').map(Number) : QUICK ? [1, 256] : [1, 64, 256, 1024]
/** BENCH_FIDELITY_BASELINE=path/to/cli/main.js adds another build's --workers auto: a change's effect, side by side. */
const BASELINE = process.env.BENCH_FIDELITY_BASELINE

interface CellResult {
  client: string
  concurrency: number
  gapMs: number
  reportedP50: number
  reportedP99: number
  trueP50: number
  trueP99: number
  eventsPerS: number
  clientLoopP99Ms: number | null
  serverLoopP99Ms: number
  peakRssMiB: number
}

function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b)
}

function p(values: number[], percentile: number): number {
  return percentileOfSorted(sorted(values), percentile) ?? Number.NaN
}

/** Peak resident memory of a child, sampled from /proc every 100 ms while it runs. */
function watchRss(child: ChildProcess): () => number {
  let peakKiB = 0
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      peakKiB = Math.max(peakKiB, kib)
    } catch {
      // The process has just exited.
    }
  }, 100)
  return () => {
    clearInterval(timer)
    return peakKiB / 1024
  }
}

function run(
  command: string,
  args: string[],
): Promise<{ stdout: string; stderr: string; peakRssMiB: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const peak = watchRss(child)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (data: Buffer) => {
      stdout += data.toString()
    })
    child.stderr?.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.once('exit', (code) => {
      const peakRssMiB = peak()
      if (code === 0) resolve({ stdout, stderr, peakRssMiB })
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`))
    })
  })
}

/** The asyncio + httpx script needs Python's httpx (Debian: python3-httpx); without it, its rows are left out. */
function hasHttpx(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import httpx'], { stdio: 'ignore' })
    return true
  } catch {
    console.log(`article script left out: \`${PYTHON} -c 'import httpx'\` fails\n`)
    return false
  }
}

async function serverStats(port: number): Promise<{ ttft_ms: number[]; loop_delay_p99_ms: number }> {
  const response = await fetch(`http://127.0.0.1:${port}/stats`)
  return (await response.json()) as { ttft_ms: number[]; loop_delay_p99_ms: number }
}

async function llmbenchCell(
  port: number,
  concurrency: number,
  workers: string,
  cli = CLI,
  label = 'llmbench',
): Promise<Omit<CellResult, 'trueP50' | 'trueP99' | 'serverLoopP99Ms' | 'gapMs'>> {
  const out = mkdtempSync(join(tmpdir(), 'llmbench-fidelity-'))
  const { stdout, peakRssMiB } = await run(process.execPath, [
    cli,
    'run',
    '--base-url',
    `http://127.0.0.1:${port}/v1`,
    '--model',
    'truth',
    '--levels',
    String(concurrency),
    '--duration',
    String(CELL_SECONDS),
    '--warmup',
    '0',
    '--no-preflight',
    '--workers',
    workers,
    '--input-tokens',
    '8',
    '--output-tokens',
    String(TOKENS),
    '--json',
    '--quiet',
    '--out',
    out,
  ])
  const level = JSON.parse(stdout).levels[0]
  return {
    client: `${label} --workers ${workers}`,
    concurrency,
    reportedP50: level.ttft_ms.p50,
    reportedP99: level.ttft_ms.p99,
    eventsPerS: level.output_tokens / level.duration_s,
    clientLoopP99Ms: level.client.event_loop_delay_p99_ms,
    peakRssMiB,
  }
}

async function articleCell(
  port: number,
  concurrency: number,
): Promise<Omit<CellResult, 'trueP50' | 'trueP99' | 'serverLoopP99Ms' | 'gapMs'>> {
  const { stdout, peakRssMiB } = await run(PYTHON, [
    join(ROOT, 'bench/fidelity/article_client.py'),
    `http://127.0.0.1:${port}/v1/chat/completions`,
    String(concurrency),
    String(CELL_SECONDS),
  ])
  const result = JSON.parse(stdout) as { ttft_ms: number[]; tokens: number; elapsed_s: number }
  return {
    client: 'article asyncio+httpx',
    concurrency,
    reportedP50: p(result.ttft_ms, 50),
    reportedP99: p(result.ttft_ms, 99),
    // Its own count is per data: line (usage and finish chunks included), as the script does.
    eventsPerS: result.tokens / result.elapsed_s,
    clientLoopP99Ms: null,
    peakRssMiB,
  }
}

async function cell(port: number, gapMs: number, concurrency: number, client: string): Promise<CellResult> {
  await serverStats(port)
  const measured =
    client === 'article'
      ? await articleCell(port, concurrency)
      : client === 'baseline'
        ? await llmbenchCell(port, concurrency, 'auto', BASELINE, 'baseline build')
        : await llmbenchCell(port, concurrency, client)
  const truth = await serverStats(port)
  return {
    ...measured,
    gapMs,
    trueP50: p(truth.ttft_ms, 50),
    trueP99: p(truth.ttft_ms, 99),
    serverLoopP99Ms: truth.loop_delay_p99_ms,
  }
}

const fixed = (value: number | null, digits = 1): string =>
  value === null || Number.isNaN(value) ? '-' : value.toFixed(digits)

function printRow(result: CellResult): void {
  console.log(
    `| ${result.client} | ${result.concurrency} | ${result.gapMs} | ${fixed(result.reportedP50 - result.trueP50)} / ${fixed(result.reportedP99 - result.trueP99)} | ` +
      `${fixed(result.trueP50)} / ${fixed(result.trueP99)} | ${Math.round(result.eventsPerS)} | ${fixed(result.clientLoopP99Ms)} | ${fixed(result.serverLoopP99Ms)} | ${fixed(result.peakRssMiB, 0)} |`,
  )
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('build first: npm run build')
  const clients = [
    '1',
    'auto',
    ...(BASELINE === undefined ? [] : ['baseline']),
    ...(hasHttpx() ? ['article'] : []),
  ]
  console.log(
    `Fidelity benchmark: ${cpus()[0]?.model ?? 'cpu'} x${availableParallelism()}, Node ${process.version}; server and clients on this machine`,
  )
  console.log(
    `server: first token ${FIRST_TOKEN_MS} ms, then one token every GAP ms, ${TOKENS} tokens per request; ${CELL_SECONDS} s per cell\n`,
  )
  console.log(
    '| client | streams | gap ms | TTFT error p50 / p99 ms | true TTFT p50 / p99 ms | events/s | client loop p99 ms | server loop p99 ms | peak RSS MiB |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  const port = 20000 + Math.floor(Math.random() * 20000)
  let server = await startTruthServer(port, FIRST_TOKEN_MS, GAP_MS, TOKENS)
  const results: CellResult[] = []
  try {
    for (const concurrency of LEVELS) {
      for (const client of clients) {
        const result = await cell(port, GAP_MS, concurrency, client)
        results.push(result)
        printRow(result)
      }
    }
    if (ONLY_LEVELS === undefined) await flood()
    async function flood(): Promise<void> {
      console.log(
        '\nFlood: 64 streams, shorter and shorter gaps; the most events/s each client takes with TTFT error p99 under 5 ms\n',
      )
      console.log(
        '| client | streams | gap ms | TTFT error p50 / p99 ms | true TTFT p50 / p99 ms | events/s | client loop p99 ms | server loop p99 ms | peak RSS MiB |',
      )
      console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
      const best = new Map<string, number>()
      for (const gapMs of QUICK ? [5, 1] : [10, 5, 2, 1, 0.5]) {
        server.kill('SIGTERM')
        server = await startTruthServer(port, FIRST_TOKEN_MS, gapMs, TOKENS)
        for (const client of clients) {
          const result = await cell(port, gapMs, 64, client)
          printRow(result)
          if (result.reportedP99 - result.trueP99 < 5)
            best.set(result.client, Math.max(best.get(result.client) ?? 0, result.eventsPerS))
        }
      }
      console.log('')
      for (const [client, eventsPerS] of best)
        console.log(`${client}: ${Math.round(eventsPerS)} events/s with TTFT error p99 < 5 ms`)
    }
    const perStream = results.filter(
      (r) =>
        r.client.startsWith('llmbench') && (r.concurrency === 1 || r.concurrency === Math.max(...LEVELS)),
    )
    if (perStream.length >= 2 && Math.max(...LEVELS) > 1) {
      for (const workers of ['1', 'auto']) {
        const low = results.find((r) => r.client === `llmbench --workers ${workers}` && r.concurrency === 1)
        const high = results.find(
          (r) => r.client === `llmbench --workers ${workers}` && r.concurrency === Math.max(...LEVELS),
        )
        if (low && high) {
          const perStreamKiB = ((high.peakRssMiB - low.peakRssMiB) * 1024) / (high.concurrency - 1)
          console.log(
            `llmbench --workers ${workers}: ${perStreamKiB.toFixed(1)} KiB of RSS per open stream (peak RSS at ${high.concurrency} streams minus at 1, per stream)`,
          )
        }
      }
    }
    const article = results.filter((r) => r.client.startsWith('article'))
    const low = article.find((r) => r.concurrency === 1)
    const high = article.find((r) => r.concurrency === Math.max(...LEVELS))
    if (low && high)
      console.log(
        `article script: ${(((high.peakRssMiB - low.peakRssMiB) * 1024) / (high.concurrency - 1)).toFixed(1)} KiB of RSS per open stream`,
      )
  } finally {
    server.kill('SIGTERM')
  }
}

await main()
