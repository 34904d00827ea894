import { mkdirSync } from 'node:fs'
import { availableParallelism, hostname } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { refinementLevel } from '../analysis/advice.js'
import { displayUrl } from '../client/redact.js'
import type { RunConfig } from '../config/types.js'
import { CpuMeter, type LevelClientStats, LoopMonitor } from '../metrics/client-health.js'
import { type LevelSummary, summarizeLevel } from '../metrics/summarize.js'
import { billedInputTokens } from '../metrics/workload-figures.js'
import { asDiskFull, isNoSpace } from '../records/disk-full.js'
import { JsonlWriter } from '../records/jsonl-writer.js'
import { newRunId } from '../records/run-identity.js'
import type { RequestRecord } from '../records/types.js'
import { type LevelProgress, levelProgress } from '../report/progress.js'
import { writeReports } from '../report/render-folder.js'
import type { BenchResult } from '../result/bench-result.js'
import { finishResult, summaryOptions } from '../result/build-result.js'
import { RECORDS_FILE } from '../result/folder-layout.js'
import type { ConnectionPolicy, CostEstimate, RunMeta, ShardInfo } from '../result/run-meta.js'
import { writeJsonAtomic } from '../result/write-json.js'
import type { RoundOutcome } from '../schedule/level-runner.js'
import { TOOL_VERSION } from '../version.js'
import { WorkerPool } from '../worker/pool.js'
import { targetSpec } from '../worker/target.js'
import { formatLength } from '../workload/lengths.js'
import { completeTokenCounts } from '../workload/token-counts.js'
import { closedByServer, connectionWords, noticeFromLoad, policyAfterProbes } from './connection-policy.js'
import { describeEstimate, estimateRun } from './estimate.js'
import { levelValues, planLevel, type ShardSlot, WHOLE_RUN } from './level-plan.js'
import { type PreflightResult, runPreflight } from './preflight.js'
import { loadWorkloadSources, type PreparedWorkload, prepareWorkload } from './prepare-workload.js'
import { type StartSchedule, waitForLevelStart } from './start-schedule.js'
import type { StopSignal } from './stop-signal.js'
import type { PlannedPrompt } from './workload-plan.js'

export { DISTINCT_PROMPTS } from './prepare-workload.js'

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
  /** One shard of a run spread over processes or machines; absent = the whole run. */
  shard?: ShardInfo
  /** Wall-clock start of each level (shards start together); absent = now, levels back to back. */
  schedule?: StartSchedule
}

export type RunOutcome =
  | { kind: 'done'; result: BenchResult; resultPath: string }
  | { kind: 'preflight-failed'; preflight: PreflightResult }
  /** Stopped before the first level: the requests sent so far are in `recordsPath`, nothing was measured. */
  | { kind: 'interrupted-before-load'; phase: 'preflight' | 'calibration' | 'set-up'; recordsPath: string }
  /** --max-cost: the estimate is above the limit (or cannot be made); nothing of the load was sent. */
  | { kind: 'over-budget'; estimate: CostEstimate | null; limit: number; reason: string }

/** `auto`: one worker thread per core (the main thread only writes records), at most one per stream. */
export function resolveWorkers(
  workers: number | 'auto',
  levels: readonly number[],
  cores = availableParallelism(),
  mode: RunConfig['load']['mode'] = 'concurrency',
): number {
  // An open loop's in-flight count is not known in advance: every worker may be needed.
  const widest = mode === 'request_rate' ? Number.POSITIVE_INFINITY : Math.max(1, ...levels)
  return Math.min(workers === 'auto' ? Math.max(1, cores) : workers, widest)
}

/**
 * The gradient end to end: preflight, workload (tokenizer, dataset, calibration, bodies), the plan
 * and its cost, then each level on the worker threads, records appended to disk as they arrive, the
 * level summarized as soon as it ends (its records are then dropped from memory), and
 * bench_result.json rewritten after every level.
 */
export async function runGradient(options: RunOptions): Promise<RunOutcome> {
  const { config, apiKey, outDir, log, stop } = options
  const slot: ShardSlot = options.shard ?? WHOLE_RUN
  // Bad tokenizer or dataset files fail before anything is sent or written.
  const sources = loadWorkloadSources(config)
  mkdirSync(outDir, { recursive: true })
  const recordsPath = join(outDir, RECORDS_FILE)
  // Disk full: stop issuing (nothing more could be recorded); the error ends the run below.
  const writer = new JsonlWriter(recordsPath, () => stop.request())
  const resultPath = join(outDir, config.metrics.output_json)
  const unregisterFlush = stop.onFlush(() => writer.flush())
  let pool: WorkerPool | null = null
  const totals = { requests: 0, input_tokens: 0, output_tokens: 0 }
  const runId = newRunId()
  const keep = (record: RequestRecord): void => {
    record.run = runId
    writer.append(record)
    totals.requests++
    totals.input_tokens += billedInputTokens(record)
    totals.output_tokens += record.output_tokens
  }
  try {
    let preflight: PreflightResult | null = null
    if (config.run.preflight) {
      preflight = await runPreflight(config, apiKey, { interrupt: stop.setupInterrupt })
      keep(tagShard(preflight.record, options.shard))
      if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
      // A failed preflight's diagnosis is the caller's to print, once, with what to do about it.
      if (!preflight.ok) return { kind: 'preflight-failed', preflight }
      log(preflight.summary)
    }
    const estimate = estimateRun(config, {
      input_mean: sources.input_mean,
      output_mean: sources.output_mean,
      request_seconds: projectedRequestSeconds(preflight, sources.output_mean),
      share: 1 / slot.count,
    })
    if (estimate !== null) log(describeEstimate(estimate))
    const limit = config.run.max_cost
    if (limit !== null) {
      const refusal = budgetRefusal(estimate, limit)
      if (refusal !== null) return { kind: 'over-budget', estimate, limit, reason: refusal }
    }
    const prepared = await prepareWorkload(
      config,
      apiKey,
      sources,
      estimate?.requests ?? Number.POSITIVE_INFINITY,
      log,
      stop.setupInterrupt,
    )
    for (const record of prepared.probeRecords) keep(tagShard(record, options.shard))
    if (stop.requested)
      return {
        kind: 'interrupted-before-load',
        phase:
          prepared.probeRecords.length > 0 ? 'calibration' : config.run.preflight ? 'preflight' : 'set-up',
        recordsPath,
      }
    const values = levelValues(config)
    const workerCount = resolveWorkers(config.run.workers, values, availableParallelism(), config.load.mode)
    const connections = policyAfterProbes(config, log)
    const spec = targetSpec(config, apiKey)
    spec.keepAlive = spec.keepAlive && connections.server_closes_after_response === null
    pool = await WorkerPool.start(
      workerCount,
      spec,
      prepared.plan.prompts.map((prompt) => prompt.body),
      slot,
    )
    const activePool = pool
    stop.enter('load')
    const unregisterStop = stop.onRequest(() =>
      activePool.stop(Math.min(INTERRUPT_GRACE_MS, config.client.timeout_s * 1000)),
    )
    const meta = describeRun(config, workerCount, prepared, estimate, options.shard, connections)
    meta.run_id = runId
    meta.totals = totals
    // Written before the first level, so even a crash leaves a folder `report` can rebuild.
    writeJsonAtomic(resultPath, finishResult([], meta))
    const summaries: Omit<LevelSummary, 'verdict' | 'advice'>[] = []
    const cpu = new CpuMeter()
    const mainLoop = new LoopMonitor('main')
    const planned = prepared.plan.prompts
    let levelIndex = 0
    const runLevel = async (value: number): Promise<BenchResult | null> => {
      const level = planLevel(config, value, slot)
      if (options.schedule !== undefined) await waitForLevelStart(options.schedule, levelIndex, stop, log)
      levelIndex++
      if (level === null || stop.requested) {
        if (level === null) log(`level ${value}: this shard's share is empty; skipped`)
        return null
      }
      const measured: RequestRecord[] = []
      let measureStartedAt: number | null = null
      // The live line is a subscriber: it reads what the records say, the run does not wait for it.
      const ticker =
        options.progress === undefined
          ? null
          : setInterval(() => {
              options.progress?.(
                levelProgress(
                  value,
                  measureStartedAt === null,
                  measured,
                  measureStartedAt ?? performance.now(),
                  performance.now(),
                  config.load.requests_per_level,
                  config.load.duration_per_level_s,
                ),
              )
            }, PROGRESS_INTERVAL_MS)
      const { loops, outcomes } = await activePool.runLevel(
        level,
        (records) => {
          for (const record of records) {
            // Stamped first: the usage check weighs the server's count against the max_tokens sent.
            stampRequested(record, planned)
            completeTokenCounts(record, (text) => sources.tokenizer.count(text))
            keep(tagShard(record, options.shard))
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
      const client: LevelClientStats = {
        cpu_percent: cpu.percent(),
        rss_mib: Math.round(process.memoryUsage().rss / 1048576),
        loops,
        ...openLoopStats(level.load, outcomes),
      }
      const closed = closedByServer(outcomes)
      if (closed !== undefined) client.connections = { closed_by_server: closed }
      if (noticeFromLoad(connections, outcomes, log)) activePool.stopReuse()
      meta.client.architecture = architecture(workerCount, connections, config.load.mode)
      writer.flush()
      summaries.push(summarizeLevel(value, measured, summaryOptions(meta), client))
      meta.levels_run.push({ value, workers: outcomes.length, client })
      const result = finishResult(summaries, meta)
      writeJsonAtomic(resultPath, result)
      const summary = result.levels.at(-1)
      if (summary !== undefined) log(progressLine(summary, config.load.mode))
      return result
    }
    try {
      let result: BenchResult | null = null
      for (const value of values) {
        if (stop.requested) break
        result = (await runLevel(value)) ?? result
      }
      // --refine: bisect between the knee and the next level tried, a few times, before the report.
      for (let step = 0; config.run.refine && result !== null && step < MAX_REFINE_STEPS; step++) {
        const next = refinementLevel(result.levels, result.saturation)
        if (next === null || stop.requested || meta.levels_run.some((level) => level.value === next)) break
        log(`refine: adding level ${next} to place the knee`)
        result = (await runLevel(next)) ?? result
      }
    } finally {
      unregisterStop()
    }
    if (writer.failure !== null) throw writer.failure
    // Interrupted: the level that was running is cut short and later levels are missing.
    meta.partial = stop.requested
    meta.finished_at = new Date().toISOString()
    const result = finishResult(summaries, meta)
    writeJsonAtomic(resultPath, result)
    stop.enter('report')
    const reportNote = await writeReports(outDir, result)
    if (reportNote !== null) log(`note: ${reportNote}`)
    return { kind: 'done', result, resultPath }
  } catch (error) {
    // ENOSPC from a summary or report write: named, not a stack trace; the records' failure, when
    // they filled the disk first, names the file that did.
    throw isNoSpace(error) && writer.failure !== null ? writer.failure : asDiskFull(error, outDir)
  } finally {
    unregisterFlush()
    writer.close()
    await pool?.close()
  }
}

/** One request's expected seconds: the preflight's TTFT plus its per-token time over the planned output. */
function projectedRequestSeconds(preflight: PreflightResult | null, outputMean: number): number | null {
  const record = preflight?.record
  if (record === undefined || record.error !== null || record.first_token_at === null) return null
  const ttft = record.first_token_at - record.sent_at
  const perToken =
    record.output_tokens > 1 ? (record.end_at - record.first_token_at) / (record.output_tokens - 1) : 0
  return (ttft + perToken * Math.max(0, outputMean - 1)) / 1000
}

function budgetRefusal(estimate: CostEstimate | null, limit: number): string | null {
  if (estimate === null)
    return `--max-cost ${limit}: the cost of a timed closed-loop run cannot be estimated without the preflight request; run with --requests, or without --no-preflight`
  if (estimate.cost === null)
    return `--max-cost ${limit}: no prices to estimate with; set [pricing] input_per_mtok and output_per_mtok`
  if (estimate.cost > limit)
    return `estimated cost ${estimate.cost.toFixed(4)} ${estimate.currency} is above --max-cost ${limit}: ${describeEstimate(estimate)}. Lower the levels, requests or durations, or raise the limit`
  return null
}

/** The plan's lengths, looked up by prompt id (records carry the id, not the prompt). */
function stampRequested(record: RequestRecord, planned: readonly PlannedPrompt[]): void {
  const prompt = planned[record.prompt_id % planned.length]
  if (prompt === undefined || record.prompt_id < 0) return
  record.requested_input_tokens = prompt.input_tokens
  record.requested_output_tokens = prompt.output_tokens
}

function tagShard(record: RequestRecord, shard: ShardInfo | undefined): RequestRecord {
  if (shard !== undefined) record.shard = shard.index
  return record
}

function openLoopStats(
  load: { kind: 'closed' | 'open'; maxInFlight?: number },
  outcomes: readonly RoundOutcome[],
): Pick<LevelClientStats, 'arrivals' | 'max_in_flight'> {
  if (load.kind !== 'open') return {}
  const arrivals = { planned: 0, sent: 0, dropped: 0 }
  for (const outcome of outcomes) {
    arrivals.planned += outcome.arrivals?.planned ?? 0
    arrivals.sent += outcome.arrivals?.sent ?? 0
    arrivals.dropped += outcome.arrivals?.dropped ?? 0
  }
  return { arrivals, max_in_flight: load.maxInFlight ?? 0 }
}

function progressLine(level: LevelSummary, mode: RunConfig['load']['mode']): string {
  const ttft = level.ttft_ms.p50 == null ? '-' : `${level.ttft_ms.p50.toFixed(0)} ms`
  const bound = level.client.bound ? ` — CLIENT-BOUND: ${level.client.reasons.join('; ')}` : ''
  const behind = level.schedule?.fell_behind ? ` — FELL BEHIND: ${level.schedule.reason}` : ''
  const name = mode === 'request_rate' ? `rate ${level.value}/s` : `level ${level.value}`
  const c = level.connections
  const connections =
    c === undefined
      ? ''
      : `; connections ${c.opened} new, ${c.reused} reused${c.resent > 0 ? `, ${c.resent} resent` : ''}`
  return (
    `${name}: ${level.requests} requests, ${level.failed} failed, ` +
    `TTFT p50 ${ttft}, ${level.output_tokens_per_s.toFixed(1)} tok/s in ${level.duration_s.toFixed(1)} s${connections}${bound}${behind}`
  )
}

function architecture(
  workers: number,
  connections: ConnectionPolicy,
  mode: RunConfig['load']['mode'],
): string {
  return `${workers} worker thread(s), each with its own event loop and undici Pool (${connectionWords(connections, mode === 'request_rate')}); main thread writes records`
}

function describeRun(
  config: RunConfig,
  workers: number,
  prepared: PreparedWorkload,
  estimate: CostEstimate | null,
  shard: ShardInfo | undefined,
  connections: ConnectionPolicy,
): RunMeta {
  const { load, workload } = config
  const rateMode = load.mode === 'request_rate'
  const metaLoad: RunMeta['load'] = {
    mode: load.mode,
    levels: levelValues(config),
    warmup_requests: load.warmup_requests,
    retry: config.client.retry,
    timeout_s: config.client.timeout_s,
  }
  if (rateMode) {
    metaLoad.arrival = load.arrival
    if (load.arrival === 'gamma') metaLoad.burstiness = load.burstiness
    metaLoad.max_in_flight = load.max_in_flight
  }
  if (load.requests_per_level !== null) metaLoad.requests_per_level = load.requests_per_level
  if (load.duration_per_level_s !== null) {
    metaLoad.duration_per_level = load.duration_per_level_s
    metaLoad.warmup_s = load.warmup_s
    metaLoad.cooldown_s = load.cooldown_s
  }
  const meta: RunMeta = {
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
      input_tokens: prepared.plan.input_mean,
      output_tokens: prepared.plan.output_mean,
      input: workload.dataset === null ? formatLength(workload.input) : 'dataset',
      output: formatLength(workload.output),
      dataset: prepared.plan.source,
      tokenizer: prepared.plan.tokenizer,
      stream: config.client.stream,
      profile: workload.profile,
      shared_prefix: workload.shared_prefix,
      ignore_eos: workload.ignore_eos,
      seed: workload.seed,
      calibration: prepared.calibration,
    },
    load: metaLoad,
    client: {
      workers,
      architecture: architecture(workers, connections, load.mode),
      connections,
      node_version: process.version,
      cpus: availableParallelism(),
      host: hostname(),
    },
    percentiles: config.metrics.percentiles,
    slo: config.metrics.slo,
    pricing: config.pricing,
    estimate,
    time_origin_ms: performance.timeOrigin,
    levels_run: [],
  }
  if (shard !== undefined) meta.shard = shard
  return meta
}
