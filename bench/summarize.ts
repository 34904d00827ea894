/**
 * A level's summary, measured side by side in one run (the machine is shared and noisy: compare the
 * ratios, not the absolute figures). The same synthetic level (REQUESTS streamed requests of TOKENS
 * token events each, a few failed) is summarized by:
 *   - this build's summarizeLevel (the figure catalogue: one pass, each record fed to every figure);
 *   - each baseline's, when BENCH_SUMMARIZE_BASELINE names built dist/ folders of other builds
 *     (`label=path`, comma-separated; e.g. the build before the catalogue, which walked the records
 *     about fifteen times);
 * and, for this build, what a level held while it ran: the records themselves (before: kept until
 * the level ended) against the summarizer fed as they arrive (the heap each leaves after a full GC).
 * Rounds alternate between the contestants so drift hits all of them alike.
 *
 * Run: node --expose-gc --import tsx bench/summarize.ts
 *      BENCH_SUMMARIZE_BASELINE="before=../old/dist" node --expose-gc --import tsx bench/summarize.ts
 */
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { LevelSummarizer, type SummaryOptions, summarizeLevel } from '../src/metrics/summarize.js'
import type { RequestRecord } from '../src/records/types.js'
import { streamedRecord } from './streamed-record.js'

const REQUESTS = Number(process.env.BENCH_SUMMARIZE_REQUESTS ?? 4096)
const TOKENS = Number(process.env.BENCH_SUMMARIZE_TOKENS ?? 256)
const ROUNDS = 7
const OPTIONS = { percentiles: [50, 90, 95, 99], timeout_ms: 120_000, timeoutMs: 120_000, slos: [] }
const STATS = { cpu_percent: 0, loops: [] }

type Summarize = typeof summarizeLevel

/** A level of streamed requests, 64 at a time, one failure in fifty. */
function level(): RequestRecord[] {
  const records: RequestRecord[] = []
  for (let i = 0; i < REQUESTS; i++) {
    const sent = Math.floor(i / 64) * (40 + TOKENS * 10) + (i % 64)
    const failed = i % 50 === 49
    const times = failed ? [] : Array.from({ length: TOKENS }, (_, k) => sent + 40 + k * 10 + (i % 7))
    records.push(streamedRecord(i, 64, sent, times, failed, TOKENS))
  }
  return records
}

async function contestants(): Promise<{ label: string; summarize: Summarize }[]> {
  const list = [{ label: 'this build', summarize: summarizeLevel }]
  for (const entry of (process.env.BENCH_SUMMARIZE_BASELINE ?? '').split(',').filter(Boolean)) {
    const [label, path] = entry.includes('=') ? entry.split('=', 2) : [entry, entry]
    const url = pathToFileURL(resolve(path as string, 'metrics/summarize.js')).href
    const module = (await import(url)) as { summarizeLevel: Summarize }
    list.push({ label: label as string, summarize: module.summarizeLevel })
  }
  return list
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Heap used after a full GC, typed arrays' buffers included, MiB. */
function heapMiB(): number {
  globalThis.gc?.()
  globalThis.gc?.()
  const memory = process.memoryUsage()
  return (memory.heapUsed + memory.arrayBuffers) / 1048576
}

/** A summarizer fed a level's records, which are let go of once fed (as a run's sink does). */
function fedSummarizer(): LevelSummarizer {
  const summarizer = new LevelSummarizer(64, OPTIONS as SummaryOptions)
  for (const record of level()) summarizer.add(record)
  return summarizer
}

/** The heap what `make` returns holds while it is kept, MiB. */
function held(make: () => unknown): number {
  const base = heapMiB()
  const kept = make()
  const mib = heapMiB() - base
  void kept
  return mib
}

async function main(): Promise<void> {
  if (globalThis.gc === undefined) console.log('(run with node --expose-gc for the memory figures)')
  const list = await contestants()
  const records = level()
  const times = new Map(list.map(({ label }) => [label, [] as number[]]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const { label, summarize } of list) {
      const started = performance.now()
      summarize(64, records, OPTIONS as SummaryOptions, STATS)
      times.get(label)?.push(performance.now() - started)
    }
  }
  const own = median(times.get('this build') ?? [])
  console.log(`A level of ${REQUESTS} requests x ${TOKENS} token events, median of ${ROUNDS} rounds:`)
  console.log('| summarizeLevel | ms | x this build |')
  console.log('| --- | --- | --- |')
  for (const { label } of list) {
    const ms = median(times.get(label) ?? [])
    console.log(`| ${label} | ${ms.toFixed(1)} | ${(ms / own).toFixed(2)} |`)
  }
  if (globalThis.gc !== undefined) {
    // What a running level holds: its records (as before), or a summarizer fed them and let go of them.
    const recordsMiB = held(level)
    const summarizerMiB = held(fedSummarizer)
    console.log(
      `\nHeld by a running level after a full GC: its records ${recordsMiB.toFixed(1)} MiB, ` +
        `the summarizer fed them ${summarizerMiB.toFixed(1)} MiB`,
    )
  }
}

await main()
