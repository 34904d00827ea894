/**
 * Open-loop schedule keeping, side by side in one run (compare ratios; the machine is shared and
 * noisy). The same seeded Poisson schedule, at several rates, against the same simulator process:
 *   - ours:  llmbench's request-rate mode (intended times fixed up front, a timer per due arrival,
 *            every due arrival sent in the same turn), 1 worker thread and auto;
 *   - naive: the common script loop: `await sleep(gap)` between arrivals and fire each request
 *            without awaiting it (fetch), so every timer's lateness adds to the next.
 * Lateness = actual send - intended send. A schedule that drifts sends a lower rate than planned
 * and hides latency: a client that is late has, in effect, coordinated with the server.
 *
 * Run: npm run bench:open-loop   (about a minute)
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULTS } from '../src/config/load.js'
import type { RunConfig } from '../src/config/types.js'
import { percentileOfSorted } from '../src/metrics/distribution.js'
import { seededRandom } from '../src/random.js'
import { readRecords } from '../src/records/jsonl-reader.js'
import { RECORDS_FILE } from '../src/result/folder-layout.js'
import { runGradient } from '../src/run/run-gradient.js'
import { StopSignal } from '../src/run/stop-signal.js'
import { arrivalOffsets } from '../src/schedule/arrivals.js'
import { startSimulatorProcess } from '../src/sim/child.js'
import { SIM_MODEL } from '../src/sim/server.js'
import { tempDir } from '../test/helpers/run-config.js'

const RATES = [50, 200, 800, 1600]
const SECONDS = 4
const OUTPUT_TOKENS = 8

interface Figures {
  sent: number
  p50: number
  p99: number
  /** Lateness of the last arrival: the drift accumulated over the level. */
  last: number
  achieved: number
}

function figures(lateness: number[], sentTimes: number[]): Figures {
  const sorted = [...lateness].sort((a, b) => a - b)
  const span = (Math.max(...sentTimes) - Math.min(...sentTimes)) / 1000
  return {
    sent: lateness.length,
    p50: percentileOfSorted(sorted, 50) ?? 0,
    p99: percentileOfSorted(sorted, 99) ?? 0,
    last: lateness.at(-1) ?? 0,
    achieved: span > 0 ? lateness.length / span : 0,
  }
}

async function ours(url: string, rate: number, workers: number | 'auto'): Promise<Figures> {
  const out = tempDir('llmbench-bench-')
  const config = structuredClone(DEFAULTS) as RunConfig
  config.target.base_url = url
  config.target.model = SIM_MODEL
  config.load.mode = 'request_rate'
  config.load.rates = [rate]
  config.load.arrival = 'poisson'
  config.load.requests_per_level = null
  config.load.duration_per_level_s = SECONDS
  config.load.warmup_requests = 0
  config.workload.input = { kind: 'fixed', value: 32 }
  config.workload.output = { kind: 'fixed', value: OUTPUT_TOKENS }
  config.run.preflight = false
  config.run.workers = workers
  const outcome = await runGradient({
    config,
    apiKey: null,
    outDir: out,
    log: () => {},
    stop: new StopSignal(),
  })
  if (outcome.kind !== 'done') throw new Error(outcome.kind)
  const records = readRecords(`${out}/${RECORDS_FILE}`).records.filter((r) => r.phase === 'measure')
  records.sort((a, b) => a.scheduled_at - b.scheduled_at)
  return figures(
    records.map((r) => r.sent_at - r.scheduled_at),
    records.map((r) => r.sent_at),
  )
}

async function naive(url: string, rate: number): Promise<Figures> {
  // The same process and seed as ours (arrivals are drawn per rate from the run's seed).
  const offsets = arrivalOffsets(
    { rate, process: 'poisson', burstiness: 1 },
    seededRandom(DEFAULTS.workload.seed * 31 + Math.round(rate * 1000)),
    { durationMs: SECONDS * 1000 },
  )
  const body = JSON.stringify({
    model: SIM_MODEL,
    messages: [{ role: 'user', content: 'word '.repeat(32) }],
    max_tokens: OUTPUT_TOKENS,
    stream: true,
  })
  const lateness: number[] = []
  const sent: number[] = []
  const inFlight: Promise<void>[] = []
  const start = performance.now()
  let previous = 0
  for (const offset of offsets) {
    await sleep(offset - previous)
    previous = offset
    const now = performance.now()
    lateness.push(now - (start + offset))
    sent.push(now)
    inFlight.push(
      fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).then(async (response) => {
        await response.text()
      }),
    )
  }
  await Promise.all(inFlight)
  return figures(lateness, sent)
}

const sim = await startSimulatorProcess({
  slots: 4096,
  prefill_base_ms: 5,
  decode_base_ms: 2,
  decode_ms_per_seq: 0,
})
const row = (name: string, f: Figures, rate: number): string =>
  `  ${name.padEnd(14)} sent ${String(f.sent).padStart(5)}  achieved ${f.achieved.toFixed(0).padStart(5)}/s (${((100 * f.achieved) / rate).toFixed(0)}%)  ` +
  `lateness p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(7)} ms  last ${f.last.toFixed(1).padStart(7)} ms`
try {
  console.log(
    `open-loop schedule keeping: Poisson arrivals, ${SECONDS} s per rate, ${OUTPUT_TOKENS} output tokens, simulator in its own process`,
  )
  for (const rate of RATES) {
    console.log(`rate ${rate}/s`)
    const one = await ours(sim.url, rate, 1)
    const auto = await ours(sim.url, rate, 'auto')
    const script = await naive(sim.url, rate)
    console.log(row('llmbench w=1', one, rate))
    console.log(row('llmbench auto', auto, rate))
    console.log(row('naive sleep', script, rate))
    console.log(
      `  ratio naive/llmbench(w=1): lateness p99 ×${(script.p99 / Math.max(one.p99, 0.01)).toFixed(1)}, drift at the end ×${(script.last / Math.max(Math.abs(one.last), 0.01)).toFixed(1)}`,
    )
  }
} finally {
  await sim.close()
}
