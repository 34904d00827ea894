/**
 * What the level intervals cost (issue 27): a level of REQUESTS streamed requests summarized by the
 * real LevelSummarizer three ways, side by side in one process (the machine is shared and noisy:
 * compare the ratios, not the absolute figures):
 *   - without intervals: the catalogue less its intervals figure;
 *   - before: the intervals figure as it was before effective sizes (percentile intervals of the
 *     ttft, tpot and e2e counts as if independent, and throughput's slices), rebuilt here;
 *   - this build: every percentile's and mean's interval of ttft, tpot, itl and e2e with its
 *     effective sample size from the series in send order, and throughput's.
 * Time: feeding the records and reading the result, median of ROUNDS rounds that alternate the
 * contestants. Memory: what the fed summarizer holds after a full GC (what a running level keeps),
 * and the heap (typed arrays included) its result() allocates, read before any GC; RSS after each.
 *
 * Run: npm run bench:intervals   (BENCH_INTERVALS_REQUESTS, BENCH_INTERVALS_TOKENS to change the level)
 */
import { performance } from 'node:perf_hooks'
import { type Accumulator, Samples } from '../src/metrics/accumulator.js'
import { e2eMs, isOk, tpotMs, ttftMs } from '../src/metrics/derive.js'
import { type AnyFigure, accumulator, type LevelContext } from '../src/metrics/figure.js'
import { LEVEL_FIGURES } from '../src/metrics/figure-catalogue.js'
import { CONFIDENCE, percentileIntervals } from '../src/metrics/intervals.js'
import { levelThroughputIntervals } from '../src/metrics/level-intervals.js'
import { LevelSummarizer, type SummaryOptions } from '../src/metrics/summarize.js'
import { seededRandom } from '../src/random.js'
import type { RequestRecord } from '../src/records/types.js'
import { streamedRecord } from './streamed-record.js'

const REQUESTS = Number(process.env.BENCH_INTERVALS_REQUESTS ?? 20_000)
const TOKENS = Number(process.env.BENCH_INTERVALS_TOKENS ?? 64)
const STREAMS = 64
const ROUNDS = 5
const OPTIONS = { percentiles: [50, 90, 95, 99], timeoutMs: 120_000, slos: [] } as unknown as SummaryOptions
const STATS = { cpu_percent: 0, loops: [] }

/** A level of streamed requests, STREAMS at a time, with latencies that drift (slow periods) and a failure in fifty. */
function level(): RequestRecord[] {
  const random = seededRandom(27)
  const records: RequestRecord[] = []
  let slow = 0
  for (let i = 0; i < REQUESTS; i++) {
    // A slow period of a few hundred requests now and then: requests in a row are not independent.
    if (i % 300 === 0) slow = random() < 0.3 ? 1 : 0
    const gap = 10 + 8 * slow + 4 * random()
    const sent = Math.floor(i / STREAMS) * (40 + TOKENS * 12) + (i % STREAMS)
    const failed = i % 50 === 49
    const ttft = 40 + 60 * slow + 30 * random()
    const times = failed ? [] : Array.from({ length: TOKENS }, (_, k) => sent + ttft + k * gap)
    records.push(streamedRecord(i, STREAMS, sent, times, failed, TOKENS))
  }
  return records
}

/** The intervals figure before effective sizes (commit 67fb542's), for the "before" contestant. */
function beforeAccumulator({ options, tally, figures }: LevelContext): Accumulator<object> {
  const ttft = new Samples()
  const tpot = new Samples()
  const e2e = new Samples()
  return accumulator(
    (record) => {
      if (!isOk(record)) return
      ttft.pushFigure(ttftMs(record))
      tpot.pushFigure(tpotMs(record))
      e2e.pushFigure(e2eMs(record))
    },
    () => {
      return {
        intervals: {
          confidence: CONFIDENCE,
          ...levelThroughputIntervals({ tally, figures }),
          ttft_ms: percentileIntervals(ttft, options.percentiles),
          tpot_ms: percentileIntervals(tpot, options.percentiles),
          e2e_ms: percentileIntervals(e2e, options.percentiles),
        },
      }
    },
  )
}

// The catalogue is one list the summarizer reads as it is built: each contestant puts its own
// intervals figure (or none) in its place for the while it runs.
const catalogue = LEVEL_FIGURES as AnyFigure[]
const at = catalogue.findIndex((figure) => 'intervals' in figure.fields)
const THIS_BUILD = catalogue[at] as AnyFigure
const BEFORE: AnyFigure = { ...THIS_BUILD, source: { accumulator: beforeAccumulator } }
const CONTESTANTS: { label: string; figure: AnyFigure | null }[] = [
  { label: 'without intervals', figure: null },
  { label: 'before (no effective n)', figure: BEFORE },
  { label: 'this build', figure: THIS_BUILD },
]

function withFigure<T>(figure: AnyFigure | null, run: () => T): T {
  if (figure === null) catalogue.splice(at, 1)
  else catalogue[at] = figure
  try {
    return run()
  } finally {
    if (figure === null) catalogue.splice(at, 0, THIS_BUILD)
    else catalogue[at] = THIS_BUILD
  }
}

function fed(records: readonly RequestRecord[]): LevelSummarizer {
  const summarizer = new LevelSummarizer(STREAMS, OPTIONS)
  for (const record of records) summarizer.add(record)
  return summarizer
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

const MiB = 1048576
function heap(): number {
  const memory = process.memoryUsage()
  return (memory.heapUsed + memory.arrayBuffers) / MiB
}
function collectedHeap(): number {
  globalThis.gc?.()
  globalThis.gc?.()
  return heap()
}

function main(): void {
  if (globalThis.gc === undefined) console.log('(run with node --expose-gc for the memory figures)')
  const records = level()
  const times = new Map(CONTESTANTS.map(({ label }) => [label, [] as number[]]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const { label, figure } of CONTESTANTS) {
      const started = performance.now()
      withFigure(figure, () => fed(records).result(STATS))
      times.get(label)?.push(performance.now() - started)
    }
  }
  const memory = new Map<string, { held: number; result: number; rss: number }>()
  for (const { label, figure } of CONTESTANTS) {
    withFigure(figure, () => {
      const base = collectedHeap()
      const summarizer = fed(records)
      const held = collectedHeap() - base
      const before = heap()
      const result = summarizer.result(STATS)
      const allocated = heap() - before
      void result
      memory.set(label, { held, result: allocated, rss: process.memoryUsage().rss / MiB })
    })
  }
  const base = median(times.get('without intervals') ?? [])
  const before = median(times.get('before (no effective n)') ?? [])
  console.log(
    `A level of ${REQUESTS} requests x ${TOKENS} token events through LevelSummarizer, median of ${ROUNDS} rounds:`,
  )
  console.log('| summarizer | ms | x without | x before | held MiB | result() allocates MiB | RSS MiB |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const { label } of CONTESTANTS) {
    const ms = median(times.get(label) ?? [])
    const mem = memory.get(label)
    const mib = (value: number | undefined) =>
      globalThis.gc === undefined || value === undefined ? '-' : value.toFixed(1)
    console.log(
      `| ${label} | ${ms.toFixed(1)} | ${(ms / base).toFixed(2)} | ${(ms / before).toFixed(2)} | ${mib(mem?.held)} | ${mib(mem?.result)} | ${mem?.rss.toFixed(0)} |`,
    )
  }
}

main()
