import { mkdirSync } from 'node:fs'
import { availableParallelism, hostname } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { refinementLevel } from '../analysis/advice.js'
import { displayUrl } from '../client/redact.js'
import type { RunConfig } from '../config/types.js'
import { CpuMeter, LoopMonitor } from '../metrics/client-health.js'
import { type LevelSummary, summarizeLevel } from '../metrics/summarize.js'
import { JsonlWriter } from '../records/jsonl-writer.js'
import { completeTokenCounts } from '../records/token-counts.js'
import type { RequestRecord } from '../records/types.js'
import { type LevelProgress, levelProgress } from '../report/progress.js'
import { writeReports } from '../report/render-folder.js'
import { type BenchResult, finishResult, type RunMeta, summaryOptions } from '../report/result-json.js'
import { writeJsonAtomic } from '../report/write-json.js'
import { TOOL_VERSION } from '../version.js'
import { WorkerPool } from '../worker/pool.js'
import { PromptSource } from '../workload/prompts.js'
import { buildBody } from '../workload/request-body.js'
import { TOKENIZER_NAME } from '../workload/tokenizer.js'
import { type PreflightResult, runPreflight } from './preflight.js'
import type { StopSignal } from './stop-signal.js'
import { targetSpec } from './target.js'

export const RECORDS_FILE = 'requests.jsonl'
/** Distinct prompts per run: request i uses prompt i mod this (and no two share a prefix). */
export const DISTINCT_PROMPTS = 512
const PROGRESS_INTERVAL_MS = 500
/** After a first Ctrl-C, in-flight requests get this long to finish before they are cut. */
export const INTERRUPT_GRACE_MS = 5_000
/** --refine runs at most this many extra levels. */
const MAX_REFINE_STEPS = 3

export interface RunOptions {
  config: RunConfig
  apiKey: string | null
  /** The result folder itself. */
  outDir: string
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void
  /** Set by the CLI's SIGINT handler: stop issuing, drain, write a partial result. */
  stop: StopSignal
  /** Called every half second while a level runs (the CLI draws a live line on a TTY). */
  progress?: (progress: LevelProgress) => void
}

export type RunOutcome =
  | { kind: 'done'; result: BenchResult; resultPath: string }
  | { kind: 'preflight-failed'; preflight: PreflightResult }

/** `auto`: one worker thread per core (the main thread only writes records), at most one per stream. */
export function resolveWorkers(
  workers: number | 'auto',
  levels: readonly number[],
  cores = availableParallelism(),
): number {
  const widest = Math.max(1, ...levels)
  return Math.min(workers === 'auto' ? Math.max(1, cores) : workers, widest)
}

/**
 * The concurrency gradient end to end: preflight, then each level on the worker threads, records
 * appended to disk as they arrive, the level summarized as soon as it ends (its records are then
 * dropped from memory), and bench_result.json rewritten after every level.
 */
export async function runGradient(options: RunOptions): Promise<RunOutcome> {
  const { config, apiKey, outDir, log, stop } = options
  mkdirSync(outDir, { recursive: true })
  const writer = new JsonlWriter(join(outDir, RECORDS_FILE))
  const resultPath = join(outDir, config.metrics.output_json)
  const unregisterFlush = stop.onFlush(() => writer.flush())
  let pool: WorkerPool | null = null
  try {
    if (config.run.preflight) {
      const preflight = await runPreflight(config, apiKey)
      writer.append(preflight.record)
      log(preflight.summary)
      if (!preflight.ok) return { kind: 'preflight-failed', preflight }
    }
    const workerCount = resolveWorkers(config.run.workers, config.load.levels)
    pool = await WorkerPool.start(workerCount, targetSpec(config, apiKey), buildBodies(config))
    const activePool = pool
    const unregisterStop = stop.onRequest(() =>
      activePool.stop(Math.min(INTERRUPT_GRACE_MS, config.client.timeout_s * 1000)),
    )
    const meta = describeRun(config, workerCount)
    // Written before the first level, so even a crash leaves a folder `report` can rebuild.
    writeJsonAtomic(resultPath, finishResult([], meta))
    const summaries: Omit<LevelSummary, 'verdict' | 'advice'>[] = []
    const cpu = new CpuMeter()
    const mainLoop = new LoopMonitor('main')
    const runLevel = async (concurrency: number): Promise<BenchResult> => {
      const measured: RequestRecord[] = []
      const activeWorkers = Math.min(workerCount, concurrency)
      let measureStartedAt: number | null = null
      // The live line is a subscriber: it reads what the records say, the run does not wait for it.
      const ticker =
        options.progress === undefined
          ? null
          : setInterval(() => {
              options.progress?.(
                levelProgress(
                  concurrency,
                  measureStartedAt === null,
                  measured,
                  measureStartedAt ?? performance.now(),
                  performance.now(),
                  config.load.requests_per_level,
                  config.load.duration_per_level_s,
                ),
              )
            }, PROGRESS_INTERVAL_MS)
      const loops = await activePool.runLevel(
        {
          concurrency,
          warmup: config.load.warmup_requests,
          requests: config.load.requests_per_level,
          duration_s: config.load.duration_per_level_s,
          retry: config.client.retry,
        },
        (records) => {
          for (const record of records) {
            completeTokenCounts(record)
            writer.append(record)
            if (record.phase === 'measure') measured.push(record)
          }
        },
        () => {
          measureStartedAt = performance.now()
          cpu.start()
          mainLoop.start()
        },
      )
      if (ticker !== null) clearInterval(ticker)
      loops.push(mainLoop.stop())
      const client = {
        cpu_percent: cpu.percent(),
        rss_mib: Math.round(process.memoryUsage().rss / 1048576),
        loops,
      }
      writer.flush()
      summaries.push(summarizeLevel(concurrency, measured, summaryOptions(meta), client))
      meta.levels_run.push({ concurrency, workers: activeWorkers, client })
      const result = finishResult(summaries, meta)
      writeJsonAtomic(resultPath, result)
      const level = result.levels.at(-1)
      if (level !== undefined) log(progressLine(level))
      return result
    }
    try {
      let result: BenchResult | null = null
      for (const concurrency of config.load.levels) {
        if (stop.requested) break
        result = await runLevel(concurrency)
      }
      // --refine: bisect between the knee and the next level tried, a few times, before the report.
      for (let step = 0; config.run.refine && result !== null && step < MAX_REFINE_STEPS; step++) {
        const next = refinementLevel(result.levels, result.saturation)
        if (next === null || stop.requested || meta.levels_run.some((level) => level.concurrency === next))
          break
        log(`refine: adding level ${next} to place the knee`)
        result = await runLevel(next)
      }
    } finally {
      unregisterStop()
    }
    // Interrupted: the level that was running is cut short and later levels are missing.
    meta.partial = stop.requested
    meta.finished_at = new Date().toISOString()
    const result = finishResult(summaries, meta)
    writeJsonAtomic(resultPath, result)
    await writeReports(outDir, result)
    return { kind: 'done', result, resultPath }
  } finally {
    unregisterFlush()
    writer.close()
    await pool?.close()
  }
}

/** Every distinct request body, serialized once before any clock starts. */
function buildBodies(config: RunConfig): Buffer[] {
  const prompts = new PromptSource(config.workload.input_tokens, 1, DISTINCT_PROMPTS)
  const options = {
    model: config.target.model,
    endpoint: config.target.endpoint,
    stream: config.client.stream,
    maxTokens: config.workload.output_tokens,
  }
  return Array.from({ length: DISTINCT_PROMPTS }, (_, id) => buildBody(options, prompts.prompt(id)))
}

function progressLine(level: LevelSummary): string {
  const ttft = level.ttft_ms.p50 == null ? '-' : `${level.ttft_ms.p50.toFixed(0)} ms`
  const bound = level.client.bound ? ` — CLIENT-BOUND: ${level.client.reasons.join('; ')}` : ''
  return (
    `level ${level.concurrency}: ${level.requests} requests, ${level.failed} failed, ` +
    `TTFT p50 ${ttft}, ${level.output_tokens_per_s.toFixed(1)} tok/s in ${level.duration_s.toFixed(1)} s${bound}`
  )
}

function describeRun(config: RunConfig, workers: number): RunMeta {
  const load: RunMeta['load'] = {
    mode: 'concurrency',
    levels: config.load.levels,
    warmup_requests: config.load.warmup_requests,
    retry: config.client.retry,
    timeout_s: config.client.timeout_s,
  }
  if (config.load.requests_per_level !== null) load.requests_per_level = config.load.requests_per_level
  if (config.load.duration_per_level_s !== null) load.duration_per_level = config.load.duration_per_level_s
  return {
    tool_version: TOOL_VERSION,
    started_at: new Date().toISOString(),
    finished_at: null,
    partial: true,
    target: {
      base_url: displayUrl(config.target.base_url),
      endpoint: config.target.endpoint,
      model: config.target.model,
    },
    workload: {
      input_tokens: config.workload.input_tokens,
      output_tokens: config.workload.output_tokens,
      dataset: 'synthetic (seeded word prompts)',
      tokenizer: TOKENIZER_NAME,
      stream: config.client.stream,
    },
    load,
    client: {
      workers,
      architecture: `${workers} worker thread(s), each with its own event loop and undici Pool (one keep-alive connection per stream); main thread writes records`,
      node_version: process.version,
      cpus: availableParallelism(),
      host: hostname(),
    },
    percentiles: config.metrics.percentiles,
    slo: config.metrics.slo,
    levels_run: [],
  }
}
