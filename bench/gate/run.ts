/**
 * The paired gate beside today's two-run gate, many times over, with drift injected (issue 38):
 * false alarms on A/A, power on a slowdown of decode (TPOT and throughput) and of prefill (TTFT),
 * the share of "inconclusive", and the (virtual) time each gate's measurements take.
 *
 * The server is the simulator's own engine (src/model/engine.ts, the code behind `llmbench sim`),
 * run in virtual time so that hundreds of runs take a minute: its costs are read at every step
 * through `hostCosts`, which multiplies them by the host's state at that instant (the drift, shared
 * by both targets, which run on one host) and by a little noise. The records it yields go through
 * the gates' own code (compareRuns), as `llmbench compare` would judge the folders.
 *
 * - two-run: A's run (levels, then the control level), a pause, then B's run; compared as two folders.
 * - paired:  one run, each level cut into blocks of A and B in the order `run --paired` uses.
 * - together: one run of `run --paired --paired-mode together`: each block gives both targets the
 *             whole level at the same instants (separate hardware, each its own engine, under one
 *             shared drift: a neighbour on the network or the client machine), judged as `compare DIR`
 *             judges a together folder.
 *
 * Run: npm run bench:gate [-- --trials 20] [-- --max-regression 0.05] [-- --requests 40] [-- --pairs 4]
 *      [-- --drift neighbour]
 * (--max-regression: the relative threshold of every latency percentile and of throughput, in place
 * of the defaults; the gate calls a change a regression only when its whole interval is beyond the
 * threshold, so a change the size of the threshold is caught about half the time at best.
 * --requests: per level per target; --pairs: the paired gates' pairs of blocks per level, each block
 * requests / pairs (at least two rounds of streams); --drift: only the drifts whose name holds it.)
 */
import { performance } from 'node:perf_hooks'
import { DriftSamples } from '../../src/analysis/drift.js'
import {
  type CompareOutcome,
  compareRuns,
  DEFAULT_MAX_REGRESSION,
  type RunRecords,
} from '../../src/compare/compare.js'
import { resolveSimParams, type SimParams, VirtualClock } from '../../src/model/engine.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { controlRequests } from '../../src/run/plan/level-plan.js'
import { blockRequests, pairedOrder, togetherBlocks } from '../../src/run/plan/paired-blocks.js'
import { type CostChange, type Host, hostCosts, STEP_NOISE, Target } from './virtual-target.js'

const LEVELS = [1, 4, 8]
const INPUT_TOKENS = 256
const OUTPUT_TOKENS = 64
const LENGTHS = { input: INPUT_TOKENS, output: OUTPUT_TOKENS }
/** A 4-slot server, as the CPU-like preset: the top level queues. */
const SERVER: Partial<SimParams> = {
  slots: 4,
  prefill_base_ms: 10,
  prefill_ms_per_token: 0.2,
  decode_base_ms: 10,
  decode_ms_per_seq: 0.9,
}
/** Between A's run and B's in the two-run gate (a CI job builds and deploys B meanwhile). */
const PAUSE_BETWEEN_RUNS_MS = 60_000
interface DriftKind {
  name: string
  /** A host for one trial of this span of virtual time. */
  make: (random: () => number, spanMs: number) => Host
}

const DRIFTS: DriftKind[] = [
  { name: 'none', make: () => () => 1 },
  {
    name: 'step +25%',
    make: (random, span) => {
      const at = span * (0.2 + 0.6 * random())
      return (t) => (t < at ? 1 : 1.25)
    },
  },
  { name: 'ramp +30%', make: (_, span) => (t) => 1 + (0.3 * Math.min(t, span)) / span },
  {
    name: 'neighbour on/off +40%',
    make: (random) => {
      const period = 8_000 + 12_000 * random()
      const phase = period * random()
      return (t) => (((t + phase) % period) / period < 0.5 ? 1.4 : 1)
    },
  },
]

/** What B changes: its costs multiplied, per kind of cost. */
interface Change extends CostChange {
  name: string
}

const CHANGES: Change[] = [
  { name: 'A/A (no change)', decode: 1, prefill: 1 },
  { name: 'decode +10%', decode: 1.1, prefill: 1 },
  { name: 'decode +20%', decode: 1.2, prefill: 1 },
  { name: 'prefill +10%', decode: 1, prefill: 1.1 },
  { name: 'prefill +20%', decode: 1, prefill: 1.2 },
]

/**
 * What compareRuns reads of a run's meta: its levels and set-up (for the mismatch check and the
 * percentiles compared). The rest of a result's meta is the run's story, which no gate reads.
 */
function meta(): RunMeta {
  return {
    target: { model: 'sim' },
    workload: { input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS, stream: true },
    load: { mode: 'concurrency', levels: LEVELS, warmup_requests: 0 },
    levels_run: LEVELS.map((value) => ({ value, workers: 1, client: { cpu_percent: 0, loops: [] } })),
    percentiles: [50, 95, 99],
  } as unknown as RunMeta
}

interface Trial {
  outcome: CompareOutcome
  /** Virtual time the gate's measurements took, ms. */
  spanMs: number
}

/** Today's gate: A's whole run with its control level, a pause, B's whole run; compared as two folders. */
function twoRunTrial(change: Change, drift: DriftKind, seed: number): Trial {
  const random = seededRandom(seed)
  const clock = new VirtualClock()
  const span = 2 * expectedRunMs() + PAUSE_BETWEEN_RUNS_MS
  const host = drift.make(random, span)
  const server = resolveSimParams(SERVER)
  const run = (target: Target): RunRecords => {
    const records = LEVELS.flatMap((level) =>
      target.block(level, REQUESTS_PER_LEVEL, { level, phase: 'measure' }),
    )
    const first = LEVELS[0] as number
    records.push(
      ...target.block(first, controlRequests(REQUESTS_PER_LEVEL, first), { level: first, phase: 'control' }),
    )
    const drifts = new DriftSamples(first)
    for (const r of records) drifts.add(r)
    const drift = drifts.result()
    // As bench_result.json carries it, which is what compare reads.
    const carried = drift && { ...drift, first: { ...drift.first }, control: { ...drift.control } }
    return { meta: meta(), records, drift: carried }
  }
  const a = run(new Target(hostCosts(server, CHANGES[0] as Change, host, clock, random), clock, LENGTHS))
  clock.advanceBy(PAUSE_BETWEEN_RUNS_MS)
  const b = run(new Target(hostCosts(server, change, host, clock, random), clock, LENGTHS))
  return { outcome: compareRuns(a, b, GATES).outcome, spanMs: clock.now() }
}

/** The paired gate: one run, each level's blocks of A and B alternating as `run --paired` orders them. */
function pairedTrial(change: Change, drift: DriftKind, seed: number): Trial {
  const random = seededRandom(seed)
  const clock = new VirtualClock()
  const host = drift.make(random, 2 * expectedRunMs())
  const server = resolveSimParams(SERVER)
  const targets = [
    new Target(hostCosts(server, CHANGES[0] as Change, host, clock, random), clock, LENGTHS),
    new Target(hostCosts(server, change, host, clock, random), clock, LENGTHS),
  ]
  const sides: RequestRecord[][] = [[], []]
  LEVELS.forEach((level, index) => {
    const size = blockRequests(REQUESTS_PER_LEVEL, level, PAIRS)
    for (const block of pairedOrder(seed, index, PAIRS))
      sides[block.target]?.push(
        ...(targets[block.target] as Target).block(level, size, {
          level,
          phase: 'measure',
          pair: block.pair,
        }),
      )
  })
  const side = (records: RequestRecord[]): RunRecords => ({ meta: meta(), records, drift: null })
  const comparison = compareRuns(side(sides[0] ?? []), side(sides[1] ?? []), GATES, {
    paired: true,
  })
  return { outcome: comparison.outcome, spanMs: clock.now() }
}

/**
 * The together gate: one run, each level's pairs of blocks giving A and B the level at the same
 * instants. Two engines (separate hardware) on one clock: the drift at an instant multiplies both
 * targets' costs alike, the step noise is each engine's own. Its span is one run's: both at once.
 */
function togetherTrial(change: Change, drift: DriftKind, seed: number): Trial {
  const random = seededRandom(seed)
  const clock = new VirtualClock()
  const host = drift.make(random, expectedRunMs())
  const server = resolveSimParams(SERVER)
  const targets = [
    new Target(hostCosts(server, CHANGES[0] as Change, host, clock, random), clock, LENGTHS),
    new Target(hostCosts(server, change, host, clock, random), clock, LENGTHS),
  ]
  const sides: RequestRecord[][] = [[], []]
  for (const level of LEVELS) {
    const size = blockRequests(REQUESTS_PER_LEVEL, level, PAIRS)
    for (const block of togetherBlocks(PAIRS)) {
      const stamp = { level, phase: 'measure' as const, pair: block.pair }
      // Both started before the clock runs: their requests fill in side by side until both are done.
      const started = targets.map((target) => target.start(level, size, stamp))
      clock.runAll()
      started.forEach((records, t) => {
        sides[t]?.push(...records)
      })
    }
  }
  const side = (records: RequestRecord[]): RunRecords => ({ meta: meta(), records, drift: null })
  const comparison = compareRuns(side(sides[0] ?? []), side(sides[1] ?? []), GATES, {
    paired: true,
    pairedMode: 'together',
  })
  return { outcome: comparison.outcome, spanMs: clock.now() }
}

/** One quiet run of A's levels, for the span a drift is laid over. */
let quietRunMs: number | null = null
function expectedRunMs(): number {
  if (quietRunMs !== null) return quietRunMs
  const clock = new VirtualClock()
  const target = new Target(resolveSimParams(SERVER), clock, LENGTHS)
  for (const level of LEVELS) target.block(level, REQUESTS_PER_LEVEL, { level, phase: 'measure' })
  quietRunMs = clock.now()
  return quietRunMs
}

/** The word after `--name` on the command line, or undefined. */
function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? undefined : process.argv[at + 1]
}

function argument(name: string, fallback: number): number {
  const value = Number(option(name) ?? Number.NaN)
  return Number.isFinite(value) && value > 0 ? value : fallback
}

const TRIALS = Math.floor(argument('trials', 20))
const REQUESTS_PER_LEVEL = Math.floor(argument('requests', 40))
const PAIRS = Math.floor(argument('pairs', 4))
const DRIFT_FILTER = option('drift') ?? ''
const THRESHOLD = argument('max-regression', Number.NaN)
/** The gates: today's defaults, or --max-regression for every latency percentile and throughput. */
const GATES: Record<string, number> = Number.isNaN(THRESHOLD)
  ? DEFAULT_MAX_REGRESSION
  : Object.fromEntries(
      Object.entries(DEFAULT_MAX_REGRESSION).map(([key, value]) => [
        key,
        /^(ttft|tpot|e2e)_p|^throughput$/.test(key) ? THRESHOLD : value,
      ]),
    )
const pct = (n: number): string => `${Math.round((100 * n) / TRIALS)}%`.padStart(4)

console.log(
  `# gate trials: ${TRIALS} per cell; levels ${LEVELS.join(',')}, ${REQUESTS_PER_LEVEL} requests per level per target ` +
    `(paired: ${PAIRS} pairs of blocks), ` +
    `${INPUT_TOKENS}/${OUTPUT_TOKENS} tokens, a ${SERVER.slots}-slot simulated server in virtual time, step noise ${100 * STEP_NOISE}%`,
)
console.log(
  `# thresholds: ${Number.isNaN(THRESHOLD) ? 'the defaults (latency percentiles 10%, throughput 5%)' : `${100 * THRESHOLD}% on latency percentiles and throughput`}`,
)
console.log(
  '# cells: regression (exit 1) / inconclusive (exit 5) / pass (exit 0); on A/A a regression is a false alarm',
)
console.log(
  '| drift | B | two-run: regr / inconcl / pass | paired interleave: regr / inconcl / pass | paired together: regr / inconcl / pass |',
)
console.log('| --- | --- | --- | --- | --- |')
const started = performance.now()
const GATE_KINDS = ['twoRun', 'paired', 'together'] as const
type GateKind = (typeof GATE_KINDS)[number]
const TRIAL_OF: Record<GateKind, (change: Change, drift: DriftKind, seed: number) => Trial> = {
  twoRun: twoRunTrial,
  paired: pairedTrial,
  together: togetherTrial,
}
const spans: Record<GateKind, number> = { twoRun: 0, paired: 0, together: 0 }
let gates = 0
for (const [d, drift] of DRIFTS.entries())
  for (const [c, change] of CHANGES.entries()) {
    if (!drift.name.includes(DRIFT_FILTER)) continue
    const tally = Object.fromEntries(
      GATE_KINDS.map((kind) => [kind, new Map<CompareOutcome, number>()]),
    ) as Record<GateKind, Map<CompareOutcome, number>>
    for (let trial = 0; trial < TRIALS; trial++) {
      // Every gate's trial from the same seed (each its own generator): a column added leaves the others' figures.
      const seed = 1_000_003 * (d + 1) + 10_007 * (c + 1) + trial
      for (const kind of GATE_KINDS) {
        const { outcome, spanMs } = TRIAL_OF[kind](change, drift, seed)
        tally[kind].set(outcome, (tally[kind].get(outcome) ?? 0) + 1)
        spans[kind] += spanMs
      }
      gates++
    }
    const cells = (tally: Map<CompareOutcome, number>): string =>
      (['regression', 'inconclusive', 'pass'] as const).map((o) => pct(tally.get(o) ?? 0)).join(' / ')
    console.log(
      `| ${drift.name} | ${change.name} | ${GATE_KINDS.map((kind) => cells(tally[kind])).join(' | ')} |`,
    )
  }
const seconds = (kind: GateKind): string => (spans[kind] / gates / 1000).toFixed(0)
console.log(
  `# measured time per gate (virtual): two-run ${seconds('twoRun')} s ` +
    `(including a ${PAUSE_BETWEEN_RUNS_MS / 1000} s pause between the runs), paired interleave ${seconds('paired')} s, ` +
    `paired together ${seconds('together')} s; this bench took ${((performance.now() - started) / 1000).toFixed(0)} s of wall time`,
)
