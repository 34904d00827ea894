import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { refinementLevel } from '../analysis/advice.js'
import { type Drift, DriftSamples } from '../analysis/drift.js'
import { RampSamples } from '../analysis/ramp-knee.js'
import { bracketed, MAX_SEARCH_PROBES, nextProbe, searchOutcome } from '../analysis/search.js'
import { proxyMetaOf } from '../client/proxy.js'
import { displayUrl } from '../client/redact.js'
import type { Endpoint } from '../client/target.js'
import type { RunConfig } from '../config/types.js'
import { fluidityDeadlines } from '../metrics/fluidity.js'
import { levelName } from '../metrics/level-name.js'
import { precisionLine } from '../metrics/precision.js'
import { poolRepeats } from '../metrics/repeat-pool.js'
import { LevelSummarizer, type LevelSummary } from '../metrics/summarize.js'
import {
  type RunSplitMeta,
  type LevelFigures as TargetFigures,
  TargetLevels,
} from '../metrics/target-levels.js'
import { ModelEvidence } from '../model/evidence.js'
import { asDiskFull, isNoSpace } from '../records/disk-full.js'
import type { RequestRecord } from '../records/types.js'
import type { LevelProgress } from '../report/progress.js'
import { writeReports } from '../report/render-folder.js'
import { appendStepSummary } from '../report/step-summary.js'
import { latenessNote } from '../report/workload-notes.js'
import type { BenchResult } from '../result/bench-result.js'
import { finishResult, summaryOptions } from '../result/build-result.js'
import { RECORDS_FILE } from '../result/folder-layout.js'
import type { ConnectionPolicy, CostEstimate, RunMeta, ShardInfo } from '../result/run-meta.js'
import { soloLevel } from '../result/run-model.js'
import { describeServerSelf, type ServerSelf } from '../result/server-self.js'
import { writeJsonAtomic } from '../result/write-json.js'
import type { LevelShare } from '../schedule/level-share.js'
import { type LevelWindow, withServerFigures } from '../server-metrics/level-figures.js'
import type { ServerMetricsScraper } from '../server-metrics/scraper.js'
import { WorkerPool } from '../worker/pool.js'
import { OutputCheck } from '../workload/output-check.js'
import { forEngine } from '../workload/structured-output.js'
import { CacheResetter } from './level/cache-resetter.js'
import { type LiveMetrics, startLiveMetrics } from './level/live-metrics.js'
import { type MeasureContext, type MeasuredLevel, measureLevel } from './level/measure-level.js'
import { PrecisionWatch } from './level/precision-watch.js'
import { RecordSink } from './level/record-sink.js'
import { RunClock } from './level/run-clock.js'
import { startServerMetrics } from './level/server-metrics.js'
import { sizeControl } from './plan/control-size.js'
import { architecture, describeRun } from './plan/describe-run.js'
import { describeEstimate, estimateRun } from './plan/estimate.js'
import { jobWork } from './plan/job-plan.js'
import {
  CONTROL_MIN_SECONDS,
  controlRequests,
  levelValues,
  planLevel,
  plansControl,
  timedLevelSeconds,
  WHOLE_RUN,
} from './plan/level-plan.js'
import {
  blockRequests,
  describeOrder,
  type PairedBlock,
  pairedOrder,
  type TogetherBlock,
  togetherBlocks,
} from './plan/paired-blocks.js'
import {
  loadWorkloadSources,
  type PreparedWorkload,
  prepareWorkload,
  type WorkloadSources,
} from './plan/prepare-workload.js'
import { refuseUnrunnable, shapedConfig } from './plan/run-shape.js'
import { sampleSizeAdvice } from './plan/sample-advice.js'
import { sessionWork } from './plan/session-plan.js'
import { type StartSchedule, waitForLevelStart } from './plan/start-schedule.js'
import { noticeFromLoad, policyAfterProbes } from './setup/connection-policy.js'
import { contextWarning } from './setup/context-warning.js'
import { modelBodies } from './setup/model-bodies.js'
import { type PreflightResult, runFeaturePreflight, runPreflight } from './setup/preflight.js'
import {
  describeTiming,
  lengthProbeFor,
  type ProbeTiming,
  projectedSeconds,
  timeProbes,
  traceSpanSeconds,
} from './setup/probe-timing.js'
import { resolveEndpoint } from './setup/resolve-endpoint.js'
import {
  firstEndpoint,
  isSplit,
  type RunTargets,
  resolveTargets,
  splitMetaOf,
  withKeepAlive,
} from './setup/run-targets.js'
import { readServerSelf } from './setup/server-self-read.js'
import type { LevelCoordination } from './shard/coordinator-link.js'
import { testClockShiftMs, wallOrigin } from './shard/shard-clock.js'
import type { StopSignal } from './stop-signal.js'

export { DISTINCT_PROMPTS } from './plan/prepare-workload.js'

import { resolveWorkers } from './plan/worker-count.js'

/** After a first Ctrl-C, in-flight requests get this long to finish before they are cut. */
export const INTERRUPT_GRACE_MS = 5_000
/** --refine runs at most this many extra levels. */
const MAX_REFINE_STEPS = 3

export type RunOptions = RunSettings &
  (
    | {
        /** Every endpoint and (endpoint, model) target, resolved once (prepareRun, or resolveTargets). */
        targets: RunTargets
      }
    | {
        /** The first endpoint, resolved (see resolveEndpoint); the others are resolved beside it from `config`. */
        endpoint: Endpoint
      }
    | {
        /** The key, when no `endpoint` is given: the endpoint is then resolved from `config`; null = none. */
        apiKey: string | null
      }
  )

interface RunSettings {
  config: RunConfig
  /** The result folder itself. */
  outDir: string
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void
  /** Lines said even when progress is not (--quiet): the live metrics URL. Default: log. */
  notice?: (line: string) => void
  /** Set by the CLI's SIGINT handler: stop issuing, drain, write a partial result. */
  stop: StopSignal
  /** Called every half second while a level runs (the CLI draws a live line on a TTY). */
  progress?: (progress: LevelProgress) => void
  /** One shard of a run spread over processes or machines; absent = the whole run. */
  shard?: ShardInfo
  /** Wall-clock start of each level (shards start together); absent = now, levels back to back. */
  schedule?: StartSchedule
  /** --coordinator: each level started and ended with the other shards (run/shard/coordinator-link.ts). */
  coordination?: LevelCoordination
}

export type RunOutcome =
  | { kind: 'done'; result: BenchResult; resultPath: string }
  | { kind: 'preflight-failed'; preflight: PreflightResult }
  /** Stopped before the first level: nothing was measured and no folder written (`recordsPath` is where the records would have gone). */
  | { kind: 'interrupted-before-load'; phase: 'preflight' | 'calibration' | 'set-up'; recordsPath: string }
  /** --max-cost: the estimate is above the limit (or cannot be made); nothing of the load was sent. */
  | { kind: 'over-budget'; estimate: CostEstimate | null; limit: number; reason: string }
  /** --reset-cache: the server has no cache-reset call llmbench knows, or it failed; nothing of the load was sent. */
  | { kind: 'cache-reset-refused'; reason: string }

/**
 * The gradient end to end, as phases over one RecordSink: the set-up (preflight, plan and cost,
 * workload and calibration), the load (each level on the worker threads, summarized as soon as it
 * ends, bench_result.json rewritten after every level, then --refine), and the finish (the final
 * result and the report).
 */
export async function runGradient(given: RunOptions): Promise<RunOutcome> {
  // The same shape of run as prepareRun's (a config it shaped comes back as is): the library's runGradient is the CLI's run.
  const options = { ...given, config: shapedConfig(given.config, given.shard !== undefined) }
  const { config, outDir, stop } = options
  refuseUnrunnable(config, {
    sharded: options.shard !== undefined,
    scheduled: options.schedule !== undefined,
  })
  // An unsendable key (the run's or an endpoint's own) is refused here, before anything is sent or written.
  const targets = targetsOf(options)
  // The first endpoint, scrubbing every endpoint's secrets: the probes and the reads of the server send to it.
  const endpoint = firstEndpoint(targets)
  // Bad tokenizer or dataset files fail before anything is sent or written.
  const sources = loadWorkloadSources(config)
  // Disk full: stop issuing (nothing more could be recorded); the error ends the run below.
  const sink = new RecordSink(join(outDir, RECORDS_FILE), options.shard, () => stop.request())
  const unregisterFlush = stop.onFlush(() => sink.flush())
  let pool: WorkerPool | null = null
  let scraper: ServerMetricsScraper | null = null
  let live: LiveMetrics | null = null
  try {
    // The URL is said even with --quiet: with --metrics-port 0 it is the only way to learn the port.
    live = await startLiveMetrics(config, options.notice ?? options.log)
    if (live !== null) sink.watch(live)
    const setUp = await setUpRun(options, targets, sources, sink)
    if (setUp.kind !== 'ready') return setUp
    // The folder appears when the load is about to start: a failed or stopped set-up leaves none.
    sink.open()
    const workerCount = resolveWorkers(
      config.run.workers,
      levelValues(config),
      availableParallelism(),
      config.load.mode,
    )
    const connections = policyAfterProbes(endpoint, options.log)
    pool = await startPool(options, targets, setUp.prepared, workerCount, connections)
    const threads = pool
    live?.watchInFlight(() => threads.inFlight)
    const meta = await runMetaOf(options, { targets, sources, setUp, sink, workerCount, connections })
    const resultPath = join(outDir, config.metrics.output_json)
    // Written before the first level, so even a crash leaves a folder `report` can rebuild.
    writeJsonAtomic(resultPath, finishResult([], meta))
    // Before the first level, so its counters have a scrape from before it started.
    scraper = await startServerMetrics(config, targets, outDir, sink.runId, options.log)
    const clock = runClockOf(config, setUp.estimate, sources)
    const gradient: Gradient = {
      clock,
      options,
      endpoint,
      pool,
      meta,
      resultPath,
      workers: workerCount,
      connections,
      summaries: [],
      windows: [],
      runs: [],
      scraper,
      drift: new DriftSamples(levelValues(config)[0] ?? 0),
      modelEvidence: modelEvidenceOf(meta, setUp.prepared.probeRecords),
      ramp: meta.load.ramp === undefined ? null : new RampSamples(),
      levelsStarted: 0,
      targets:
        meta.split === undefined
          ? null
          : { levels: new TargetLevels(meta.split, summaryOptions(meta)), figures: [] },
      traceOffsets: sources.trace?.offsets_ms ?? null,
      cacheReset: setUp.cacheReset,
      recheck: null,
      prompts:
        setUp.prepared.plan.level_prompts === undefined || setUp.prepared.plan.control_prompts === undefined
          ? null
          : { levels: setUp.prepared.plan.level_prompts, control: setUp.prepared.plan.control_prompts },
      measure: measureContextOf(options, { pool, sink, sources, prepared: setUp.prepared, clock }),
    }
    await runLoad(gradient)
    await options.coordination?.finish()
    // The threads' heaps go before the report is drawn, not after: the report's peak is the run's.
    await pool.close()
    // Before the report: drawing the charts holds the main thread for seconds, and a scrape that
    // times out meanwhile would leave Prometheus without the final counts.
    await live?.close(!stop.requested)
    if (sink.failure !== null) throw sink.failure
    return await finishRun(gradient)
  } catch (error) {
    // ENOSPC from a summary or report write: named, not a stack trace; the records' failure, when
    // they filled the disk first, names the file that did.
    throw isNoSpace(error) && sink.failure !== null ? sink.failure : asDiskFull(error, outDir)
  } finally {
    unregisterFlush()
    sink.close()
    await scraper?.stop(false)
    await pool?.close()
    await live?.close(false)
  }
}

type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/** The run's meta before the first level: the plan described, with what the set-up learnt of the server and the endpoints. */
async function runMetaOf(
  options: RunOptions,
  made: {
    targets: RunTargets
    sources: WorkloadSources
    setUp: Extract<SetUp, { kind: 'ready' }>
    sink: RecordSink
    workerCount: number
    connections: ConnectionPolicy
  },
): Promise<RunMeta> {
  const { config, stop } = options
  const { targets, sources, setUp, sink, workerCount, connections } = made
  const endpoint = firstEndpoint(targets)
  const meta = describeRun(
    config,
    workerCount,
    setUp.prepared,
    setUp.estimate,
    options.shard,
    connections,
    setUp.cacheReset?.meta ?? null,
  )
  meta.run_id = sink.runId
  // A shard's records are put on the others' clocks by this: read to the ms, as the coordinator's
  // offset is measured against it (shard-clock.ts); a test shifts it to play a host whose clock is off.
  if (options.shard !== undefined) meta.time_origin_ms = wallOrigin() + testClockShiftMs()
  const proxy = proxyMetaOf(endpoint.url, endpoint.proxy)
  if (proxy !== null) meta.client.proxy = proxy
  if (sources.trace !== null) meta.trace = sources.trace.meta
  meta.server = setUp.server
  const timing = setUp.timing
  const deadlines = fluidityDeadlines(
    timing?.at_length?.ttft_ms ?? timing?.ttft_ms?.median ?? null,
    timing?.tpot_ms?.median ?? null,
    timing?.at_length !== undefined,
  )
  if (deadlines !== null) meta.fluidity = deadlines
  if (isSplit(targets))
    meta.split = await splitMeta(targets, setUp.server, config.run.preflight, stop, config.run)
  if (meta.load.stagger !== undefined && meta.load.levels.some((streams) => streams > 1))
    options.log(meta.load.stagger.note)
  const ramp = meta.load.ramp
  if (ramp !== undefined)
    options.log(
      `ramp: one level whose streams rise linearly from ${ramp.from} to ${ramp.to} over ${ramp.seconds} s (one more every ${round3(ramp.seconds / ramp.to)} s), not steps; the knee is read on the ramp`,
    )
  meta.totals = sink.totals
  return meta
}

/** The run's elapsed time and the estimate of the rest, from the probes' request time (or none). */
function runClockOf(config: RunConfig, estimate: CostEstimate | null, sources: WorkloadSources): RunClock {
  const seconds = estimate?.request_seconds
  const span = traceSpanSeconds(sources.trace?.offsets_ms ?? null)
  return new RunClock(
    config,
    seconds === undefined
      ? null
      : {
          request_s: seconds.median,
          prefill_s: seconds.prefill_s ?? 0,
          trace:
            sources.trace === null || span === null
              ? null
              : { rows: sources.trace.rows.length, span_s: span },
        },
  )
}

/**
 * The worker threads, each holding the run's bodies and, with several targets, every target's
 * endpoint: keep-alive off everywhere when the probes saw the first server close connections.
 */
function startPool(
  options: RunOptions,
  targets: RunTargets,
  prepared: PreparedWorkload,
  workerCount: number,
  connections: ConnectionPolicy,
): Promise<WorkerPool> {
  const endpoint = firstEndpoint(targets)
  const keepAlive = endpoint.keepAlive && connections.server_closes_after_response === null
  const bodies = prepared.plan.prompts.map((prompt) => prompt.body)
  return WorkerPool.start(
    workerCount,
    { ...endpoint, keepAlive },
    bodies,
    options.shard ?? WHOLE_RUN,
    sessionWork(prepared.plan, options.config) ?? jobWork(prepared.plan),
    isSplit(targets)
      ? {
          targets: withKeepAlive(targets.targets, keepAlive),
          modelBodies: modelBodies(
            bodies,
            targets.models.map((m) => m.id),
          ),
          weights: targets.weights,
        }
      : undefined,
  )
}

/** What every level is measured with: the threads, the records' sink, the planned prompts and the level's bounds. */
function measureContextOf(
  options: RunOptions,
  made: {
    pool: WorkerPool
    sink: RecordSink
    sources: WorkloadSources
    prepared: PreparedWorkload
    clock: RunClock
  },
): MeasureContext {
  const { config, stop, progress } = options
  const { pool, sink, sources, prepared, clock } = made
  return {
    pool,
    sink,
    stop,
    planned: prepared.plan.prompts,
    countTokens: (text) => sources.tokenizer.count(text),
    ...(sources.structured === null ? {} : { check: new OutputCheck(sources.structured) }),
    requestsPerLevel: sources.trace?.rows.length ?? config.load.requests_per_level,
    // The whole timed window (warm-up, measured, cool-down): past it, the level drains.
    durationPerLevelS: config.load.duration_per_level_s === null ? null : timedLevelSeconds(config.load),
    ...(progress === undefined ? {} : { progress: (p: LevelProgress) => progress(clock.at(p)) }),
  }
}

/** The options' targets, or the config's resolved beside the given endpoint (or the one the key makes). */
function targetsOf(options: RunOptions): RunTargets {
  if ('targets' in options) return options.targets
  const { config } = options
  const first = 'endpoint' in options ? options.endpoint : resolveEndpoint(config, options.apiKey)
  return resolveTargets(config, first, process.env, options.log)
}

type SetUp =
  | {
      kind: 'ready'
      estimate: CostEstimate | null
      prepared: PreparedWorkload
      server: ServerSelf | null
      cacheReset: CacheResetter | null
      /** The warm probes' timing; null without a preflight or when none succeeded. */
      timing: ProbeTiming | null
    }
  | Exclude<RunOutcome, { kind: 'done' }>

/** What the preflight learnt before the plan: the server's self-description and its warm timing. */
interface Probed {
  kind: 'probed'
  server: ServerSelf | null
  timing: ProbeTiming | null
}

/**
 * The preflight of every target, then the server's self-description and a few warm probes for the
 * plan's projection. A failure or a stop ends the set-up here.
 */
async function preflightAll(
  options: RunOptions,
  targets: RunTargets,
  sources: WorkloadSources,
  sink: RecordSink,
): Promise<Probed | SetUp> {
  const { config, log, stop } = options
  const endpoint = firstEndpoint(targets)
  const recordsPath = sink.path
  const preflight = await runPreflight(endpoint, { interrupt: stop.setupInterrupt })
  sink.keep(preflight.record)
  if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
  // A failed preflight's diagnosis is the caller's to print, once, with what to do about it.
  if (!preflight.ok) return { kind: 'preflight-failed', preflight }
  log(preflight.summary)
  // Several endpoints or models: each other target must answer too, before any load is sent.
  for (const target of targets.targets.slice(1)) {
    const label = `preflight of ${displayUrl(target.endpoint.url)} (${target.endpoint.body.model})`
    const other = await runPreflight(target.endpoint, { interrupt: stop.setupInterrupt, label })
    sink.keep(other.record)
    if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
    if (!other.ok) return { kind: 'preflight-failed', preflight: other }
    log(other.summary)
  }
  // Once the endpoint answers: a server that failed the preflight is not asked more, and the
  // preflight's own timing (the run's projection) is not shared with these reads.
  const server = await readServerSelf(endpoint, { interrupt: stop.setupInterrupt })
  if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
  if (server !== null) log(describeServerSelf(server))
  // The plan's projection from a few warm probes, not from the cold preflight alone.
  const probed = await timeProbes(
    endpoint,
    stop.setupInterrupt,
    undefined,
    lengthProbeFor(endpoint, sources.prompts, sources.input_mean),
  )
  for (const record of probed.records) sink.keep(record)
  if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
  const timing = probed.timing
  if (timing !== null) {
    log(describeTiming(timing))
    const advice = sampleSizeAdvice(config, timing, config.metrics.percentiles)
    if (advice !== null) log(advice)
  }
  return { kind: 'probed', server, timing }
}

/**
 * Before the load: the preflight request, the plan's size and cost (refused above --max-cost), the
 * workload with its calibration probes. A stop here cuts the request in flight and ends the run.
 */
async function setUpRun(
  options: RunOptions,
  targets: RunTargets,
  sources: WorkloadSources,
  sink: RecordSink,
): Promise<SetUp> {
  const { config, log, stop } = options
  const endpoint = firstEndpoint(targets)
  const recordsPath = sink.path
  // Without the preflight, nothing is asked of the server before the load.
  const probed: Probed | SetUp = config.run.preflight
    ? await preflightAll(options, targets, sources, sink)
    : { kind: 'probed', server: null, timing: null }
  if (probed.kind !== 'probed') return probed
  let server = probed.server
  const timing = probed.timing
  const estimate = estimateRun(config, {
    input_mean: sources.input_mean,
    output_mean: sources.output_mean,
    request_seconds: timing === null ? null : projectedSeconds(timing, sources.output_mean),
    share: 1 / (options.shard?.count ?? 1),
    trace_rows: sources.trace?.rows.length ?? null,
    trace_span_s: traceSpanSeconds(sources.trace?.offsets_ms ?? null),
    slots: server?.slots ?? null,
  })
  if (estimate !== null) log(describeEstimate(estimate))
  const limit = config.run.max_cost
  if (limit !== null) {
    const refusal = budgetRefusal(estimate, limit)
    if (refusal !== null) return { kind: 'over-budget', estimate, limit, reason: refusal }
  }
  const prepared = await prepareWorkload(
    config,
    endpoint,
    // The answer's schema in the form the engine reads (llama.cpp builds before 2025-03: json_object).
    sources.structured === null
      ? sources
      : { ...sources, structured: forEngine(sources.structured, server?.engine ?? null) },
    estimate?.requests ?? Number.POSITIVE_INFINITY,
    log,
    stop.setupInterrupt,
  )
  for (const record of prepared.probeRecords) sink.keep(record)
  if (stop.requested)
    return {
      kind: 'interrupted-before-load',
      phase: prepared.probeRecords.length > 0 ? 'calibration' : config.run.preflight ? 'preflight' : 'set-up',
      recordsPath,
    }
  const features = featuresOf(config)
  const featureBody = prepared.plan.prompts[0]?.body
  if (config.run.preflight && features.length > 0 && featureBody !== undefined) {
    const feature = await runFeaturePreflight(endpoint, featureBody, features, stop.setupInterrupt)
    sink.keep(feature.record)
    if (stop.requested) return { kind: 'interrupted-before-load', phase: 'preflight', recordsPath }
    if (!feature.ok) return { kind: 'preflight-failed', preflight: feature }
    log(feature.summary)
  }
  const warning = contextWarning(server, prepared.plan.prompts)
  if (server !== null && warning !== null) {
    server.context_warning = warning
    log(`warning: ${warning}`)
  }
  // Last of the set-up, so a refusal comes before the load and after every probe that fills the cache.
  let cacheReset: CacheResetter | null = null
  const resetMode = config.run.reset_cache
  if (resetMode !== 'off') {
    // Without the preflight the server has not said what it is yet: the call depends on it.
    if (server === null && !config.run.preflight) {
      server = await readServerSelf(endpoint, { interrupt: stop.setupInterrupt })
      if (server !== null) log(describeServerSelf(server))
    }
    if (stop.requested) return { kind: 'interrupted-before-load', phase: 'set-up', recordsPath }
    const checked = await CacheResetter.check(resetMode, endpoint, server, stop.setupInterrupt)
    if (stop.requested) return { kind: 'interrupted-before-load', phase: 'set-up', recordsPath }
    if ('refusal' in checked) return { kind: 'cache-reset-refused', reason: checked.refusal }
    cacheReset = checked
    log(cacheReset.meta.note)
  }
  return { kind: 'ready', estimate, prepared, server, cacheReset, timing }
}

/** A run under load: what every level needs, and what the levels so far produced. */
interface Gradient {
  options: RunOptions
  endpoint: Endpoint
  pool: WorkerPool
  meta: RunMeta
  resultPath: string
  workers: number
  /** Reuse of connections: the probes' finding, updated when the load sees the server close them. */
  connections: ConnectionPolicy
  summaries: Omit<LevelSummary, 'verdict' | 'advice'>[]
  /** Each summary's measured window, kept for the server figures recomputed at the end. */
  windows: (LevelWindow | null)[]
  /**
   * --repeat: each run of each level summarized on its own, with its window (`summaries` then hold
   * every run's records pooled, and poolRepeats makes the level's entry from both).
   */
  runs: { repeat: number; summary: LevelFigures; window: LevelWindow | null }[]
  scraper: ServerMetricsScraper | null
  /** The first level's requests and the control's, compared at the end (analysis/drift.ts). */
  drift: DriftSamples
  /** What the records show of prefill (calibration probes, a level of one stream) and decode, for the capacity model. */
  modelEvidence: ModelEvidence
  /** --ramp: the ramp level's records, for the knee read on the ramp; null for steps. */
  ramp: RampSamples | null
  /** Levels whose start time has come (for --start-at's schedule). */
  levelsStarted: number
  /** Several endpoints or models: each target's records summarized, and its figures per level so far. */
  targets: { levels: TargetLevels; figures: { level: number; figures: (TargetFigures | null)[] }[] } | null
  /** --trace: the replayed rows' offsets at speed 1; null = arrivals from the arrival process. */
  traceOffsets: Float64Array | null
  /** --reset-cache: the checked call, made before each level or once before the first; null = off. */
  cacheReset: CacheResetter | null
  measure: MeasureContext
  /** The run's elapsed time and the estimate of the rest, for the live line. */
  clock: RunClock
  /** --search with SLOs: its answer measured again at the end (runRecheck); null until then. */
  recheck: LevelFigures | null
  /** The levels' prompts and the drift control's own (workload-plan.ts); null = none reserved. */
  prompts: { levels: { first: number; count: number }; control: { first: number; count: number } } | null
}

/**
 * The levels in order, then --refine's extra ones, then the control; a stop lets the level in flight
 * drain and ends it.
 */
async function runLoad(gradient: Gradient): Promise<void> {
  const { options, pool, meta, endpoint } = gradient
  const { config, stop, log } = options
  stop.enter('load')
  const unregisterStop = stop.onRequest(() => pool.stop(Math.min(INTERRUPT_GRACE_MS, endpoint.timeoutMs)))
  const unwatchDrift = gradient.measure.sink.watch({
    observe: (record) => {
      gradient.drift.add(record)
      gradient.modelEvidence.add(record)
      gradient.ramp?.add(record)
    },
  })
  try {
    let result: BenchResult | null = null
    const search = meta.load.search ?? null
    if (gradient.cacheReset?.mode === 'before-run' && !stop.requested)
      await gradient.cacheReset.reset('the first level', log)
    for (const value of levelValues(config)) {
      if (stop.requested) break
      result = (await runLevel(gradient, value)) ?? result
      if (search !== null && result !== null && bracketed(search, result.levels, result.saturation)) break
    }
    // --search: probe inside the bracket until it is within the tolerance.
    for (let step = 0; search !== null && result !== null && step < MAX_SEARCH_PROBES; step++) {
      const probe = nextProbe(search, config.load.mode, result.levels, result.saturation)
      if (probe === null || stop.requested) break
      const inside =
        search.target === 'slo'
          ? 'between the highest level meeting the SLOs and the lowest missing them'
          : "inside the knee's bracket"
      log(`search: adding level ${probe.value} (${probe.how} ${inside})`)
      result = (await runLevel(gradient, probe.value)) ?? result
    }
    await runRecheck(gradient, result)
    // --refine: bisect between the knee and the next level tried, a few times, before the report.
    for (let step = 0; config.run.refine && result !== null && step < MAX_REFINE_STEPS; step++) {
      const next = refinementLevel(result.levels, result.saturation)
      if (next === null || stop.requested || meta.levels_run.some((level) => level.value === next)) break
      log(`refine: adding level ${next} to place the knee`)
      result = (await runLevel(gradient, next)) ?? result
    }
    await runControl(gradient)
  } finally {
    unwatchDrift()
    unregisterStop()
  }
}

/**
 * The first level measured again after the last, briefly (as few requests as can tell a drift of the
 * size drift.ts counts, cut at a tenth of the run so far: plan/control-size.ts): its records have phase `control` and
 * do not count in the level's figures; the result's `drift` compares the two. Only for a whole,
 * uninterrupted concurrency gradient of two levels or more: an open loop's rate repeated is not a
 * short measurement, a shard would measure its share only, and a session's turns differ by turn.
 */
async function runControl(gradient: Gradient): Promise<void> {
  const { options, meta, drift } = gradient
  const { config, stop, log } = options
  const first = gradient.summaries[0]
  const whole = options.shard === undefined && options.schedule === undefined
  if (!plansControl(config) || stop.requested || !whole || first === undefined) return
  if (meta.levels_run.length < 2 || drift.firstSucceeded < 2) return
  const runs = meta.load.repeat ?? 1
  const { requests, seconds, why } = sizeControl({
    perRun: Math.ceil(first.requests / runs),
    streams: first.value,
    firstSeconds: first.duration_s / runs,
    runSeconds: gradient.summaries.reduce((sum, level) => sum + level.duration_s, 0),
    first: drift.firstFigures(),
  })
  log(
    `control: level ${first.value} again, ${requests} requests (${why}), to see whether the environment drifted`,
  )
  await measureAgain(gradient, first.value, { requests, seconds }, 'control', { add() {} })
  const result = drift.result()
  if (result !== null) log(`control: ${result.reason}`)
}

/**
 * --search with SLOs: the answer (the highest level meeting them) measured again after the search,
 * a third of its requests (as the control took before it was sized by need), its records of phase `recheck`. A server that degraded during the
 * search no longer meets them there, and the result then says the answer is uncertain (issue 36).
 */
async function runRecheck(gradient: Gradient, result: BenchResult | null): Promise<void> {
  const { options, meta } = gradient
  const { config, stop, log } = options
  const search = meta.load.search ?? null
  const whole = options.shard === undefined && options.schedule === undefined
  if (search?.target !== 'slo' || result === null || stop.requested || !whole) return
  const answer = searchOutcome(search, config.load.mode, result.levels, result.saturation).value
  const level = gradient.summaries.find((summary) => summary.value === answer)
  if (answer === null || level === undefined || level.interrupted === true) return
  const { requests, seconds } = againSized(gradient, level)
  log(
    `search: level ${answer} again, ${requests} requests (at most ${seconds.toFixed(0)} s), to see whether the answer still holds`,
  )
  const summarizer = new LevelSummarizer(answer, summaryOptions(meta))
  const measured = await measureAgain(gradient, answer, { requests, seconds }, 'recheck', summarizer)
  if (measured === null) return
  gradient.recheck = summarizer.result(measured.client)
  const slo = gradient.recheck.slo
  if (slo !== null) log(`search: level ${answer} ${slo.meets ? 'still meets' : 'no longer meets'} the SLOs`)
}

/** A level measured again (the control, a search's recheck): a third of one run's requests, cut at one run's duration. */
function againSized(gradient: Gradient, level: LevelFigures): { requests: number; seconds: number } {
  // --repeat: the level's entry pools its runs; it is measured again as one run of it.
  const runs = gradient.meta.load.repeat ?? 1
  return {
    requests: controlRequests(Math.ceil(level.requests / runs), level.value),
    seconds: Math.max(CONTROL_MIN_SECONDS, level.duration_s / runs),
  }
}

/** Measures a level again, briefly and timed, with prompts no level sent; null when it could not be planned. */
async function measureAgain(
  gradient: Gradient,
  value: number,
  size: { requests: number; seconds: number },
  phase: 'control' | 'recheck',
  summary: { add(record: RequestRecord): void },
): Promise<MeasuredLevel | null> {
  const { options, meta, measure } = gradient
  const { config, log } = options
  // Sent as the level was (its streams staggered alike): a level released in lockstep would read the
  // convoy's shared prefill as a change.
  const level = planLevel(config, value, WHOLE_RUN, null, meta.load.stagger?.spread_ms ?? 0)
  if (level === null || level.load.kind !== 'closed') return null
  if (gradient.cacheReset?.mode === 'before-level') await gradient.cacheReset.reset(phase, log)
  measure.sink.setLevel(value)
  const measured = await measureLevel(
    measure,
    {
      ...level,
      warmup: 0,
      // The control: prompts no level sent, so the server's prefix cache is as cold for them as for
      // the first level's. A recheck: the levels' prompts, as every level after the first reuses them.
      ...(gradient.prompts === null
        ? {}
        : { prompts: phase === 'control' ? gradient.prompts.control : gradient.prompts.levels }),
      // Timed, so a server that slowed down cannot hold the run: nothing is sent after `seconds`.
      window: { warmup_s: 0, duration_s: size.seconds, cooldown_s: 0 },
      load: { ...level.load, requests: size.requests },
    },
    summary,
    phase,
  )
  measure.sink.flush()
  return measured
}

/**
 * One level: this shard's share of it, measured (--repeat: that many times back to back, each run's
 * records stamped with it and summarized on their own as well as pooled), summarized and written;
 * null when skipped.
 */
async function runLevel(gradient: Gradient, value: number): Promise<BenchResult | null> {
  const { options, meta, measure } = gradient
  const { config, stop, log } = options
  const stagger = meta.load.stagger?.spread_ms ?? 0
  const planned = planLevel(config, value, options.shard ?? WHOLE_RUN, gradient.traceOffsets, stagger)
  const level =
    planned === null || gradient.prompts === null ? planned : { ...planned, prompts: gradient.prompts.levels }
  const position = gradient.levelsStarted
  if (options.coordination !== undefined) await options.coordination.beforeLevel(position, value)
  else if (options.schedule !== undefined) await waitForLevelStart(options.schedule, position, stop, log)
  gradient.levelsStarted++
  if (level === null || stop.requested) {
    if (level === null) log(`level ${value}: this shard's share is empty; skipped`)
    await options.coordination?.afterLevel(position, stop.requested)
    return null
  }
  const repeats = meta.load.repeat ?? 1
  const scrapes = () => gradient.scraper?.scrapes ?? []
  // Summarized as its records arrive: the level's records are on disk, not held for its summary.
  const pooled = new LevelSummarizer(value, summaryOptions(meta))
  let busiest: MeasuredLevel | null = null
  let precision: PrecisionWatch | undefined
  if (config.run.paired && level.load.kind === 'closed') {
    busiest = await runPairedBlocks(gradient, value, level, pooled)
  }
  for (
    let repeat = 0;
    !config.run.paired && repeat < repeats && (repeat === 0 || !stop.requested);
    repeat++
  ) {
    const own = repeats > 1 ? new LevelSummarizer(value, summaryOptions(meta)) : null
    // Before the level's warm-up: no level inherits the cache the one before it left.
    if (gradient.cacheReset?.mode === 'before-level')
      await gradient.cacheReset.reset(
        `${levelName(meta, value)}${own === null ? '' : ` run ${repeat + 1}`}`,
        log,
      )
    measure.sink.repeat = own === null ? null : repeat
    measure.sink.setLevel(value)
    gradient.clock.beginLevel(value, own === null ? null : { index: repeat, of: repeats })
    // --precision (never with --repeat: the runs would differ in size): told `enough` when precise.
    precision =
      config.load.precision === null || level.load.kind !== 'closed'
        ? undefined
        : new PrecisionWatch(config.load, level.load.concurrency, () => gradient.pool.enough())
    const measured = await measureLevel(
      measure,
      level,
      {
        add(record) {
          pooled.add(record)
          own?.add(record)
          gradient.targets?.levels.add(record)
        },
      },
      'measure',
      precision,
    )
    gradient.clock.endLevel(value)
    if (noticeFromLoad(gradient.connections, measured.outcomes, log)) gradient.pool.stopReuse()
    // The client's self-watch of the level is its worst run's: a client bound in one run bounds the level.
    if (busiest === null || measured.client.cpu_percent > busiest.client.cpu_percent) busiest = measured
    measure.sink.flush()
    if (own !== null) {
      const window = own.window()
      const summary = withServerFigures(own.result(measured.client), window, scrapes(), meta.percentiles)
      gradient.runs.push({ repeat, summary, window })
      log(`${progressLine(summary, config.load.mode, meta)} (run ${repeat + 1} of ${repeats})`)
    }
  }
  measure.sink.repeat = null
  // Before the level is written: a shard lost elsewhere meanwhile cuts it here too (the stop is requested).
  await options.coordination?.afterLevel(position, stop.requested)
  if (busiest === null) return null
  return recordLevel(gradient, value, busiest, pooled, precision)
}

/**
 * A measured level into the result: its pooled summary, its meta entry (client watch, precision,
 * interruption), the result rewritten on disk and the progress line.
 */
function recordLevel(
  gradient: Gradient,
  value: number,
  busiest: MeasuredLevel,
  pooled: LevelSummarizer,
  precision: PrecisionWatch | undefined,
): BenchResult {
  const { options, meta } = gradient
  const { config, stop, log } = options
  const scrapes = () => gradient.scraper?.scrapes ?? []
  const { client, outcomes } = busiest
  meta.client.architecture = architecture(gradient.workers, gradient.connections, config.load.mode)
  const window = pooled.window()
  gradient.windows.push(window)
  gradient.summaries.push(withServerFigures(pooled.result(client), window, scrapes(), meta.percentiles))
  gradient.targets?.figures.push({
    level: value,
    figures: gradient.targets.levels.level(value, client, scrapes(), meta.percentiles),
  })
  // --precision's account goes into meta, where finishResult (and `report`) attach it to the level.
  const reached = precision?.finish(stop.requested)
  if (reached !== undefined) log(precisionLine(`level ${value}`, reached))
  // A stop during the level cut it short: it is shown, not judged.
  meta.levels_run.push({
    value,
    workers: outcomes.length,
    client,
    ...(stop.requested ? { interrupted: true } : {}),
    ...(reached === undefined ? {} : { precision: reached }),
  })
  const result = resultOf(gradient)
  writeJsonAtomic(gradient.resultPath, result)
  const summary = result.levels.at(-1)
  if (summary !== undefined) log(progressLine(summary, config.load.mode, meta))
  if (summary?.client.bound === true && meta.split?.paired_mode === 'together')
    log(
      `level ${value}: the client was the bottleneck with A and B loaded together (${summary.client.reasons.join('; ')}): ` +
        'both targets waited on this client, so their pairs cannot tell a difference between them from its own; ' +
        'judged inconclusive; run with more --workers, or --paired-mode interleave',
    )
  return result
}

/**
 * --paired: the level as blocks of the two targets in a randomized balanced order (paired-blocks.ts),
 * each block the whole level's streams on one target, its records stamped with their pair; with
 * --paired-mode together, each block gives both targets the whole level at once (the pair is then
 * one block of the same seconds). Each target warms up before its first block only. Returns the
 * block whose client was busiest.
 */
async function runPairedBlocks(
  gradient: Gradient,
  value: number,
  level: LevelShare,
  pooled: LevelSummarizer,
): Promise<MeasuredLevel | null> {
  const { options, measure } = gradient
  const { config, stop, log } = options
  if (level.load.kind !== 'closed') return null
  const size = blockRequests(level.load.requests ?? 0, level.load.concurrency)
  let blocks: readonly (PairedBlock | TogetherBlock)[]
  if (config.run.paired_mode === 'together') {
    blocks = togetherBlocks()
    log(
      `level ${value}: ${blocks.length} paired blocks, A and B loaded together with ${value} streams each (A = target 1, B = target 2), ${size} requests each per block`,
    )
  } else {
    const order = pairedOrder(config.workload.seed, gradient.levelsStarted - 1)
    blocks = order
    log(
      `level ${value}: paired blocks ${describeOrder(order)} (A = target 1, B = target 2), ${size} requests each`,
    )
  }
  if (gradient.cacheReset?.mode === 'before-level')
    await gradient.cacheReset.reset(levelName(gradient.meta, value), log)
  gradient.clock.beginLevel(value)
  let busiest: MeasuredLevel | null = null
  const warmed = new Set<number | 'each'>()
  for (const block of blocks) {
    if (stop.requested) break
    measure.sink.pair = block.pair
    measure.sink.setLevel(value)
    const share: LevelShare = {
      ...level,
      target: block.target,
      warmup: warmed.has(block.target) ? 0 : level.warmup,
      load: { ...level.load, requests: size },
    }
    warmed.add(block.target)
    const measured = await measureLevel(
      measure,
      share,
      {
        add(record) {
          pooled.add(record)
          gradient.targets?.levels.add(record)
        },
      },
      'measure',
    )
    if (noticeFromLoad(gradient.connections, measured.outcomes, log)) gradient.pool.stopReuse()
    if (busiest === null || measured.client.cpu_percent > busiest.client.cpu_percent) busiest = measured
    measure.sink.flush()
  }
  measure.sink.pair = null
  gradient.clock.endLevel(value)
  return busiest
}

/**
 * The run's split as the result shows it, each endpoint with the slots its server declares (the
 * first one's from the run's own read; the others read here, after their preflights), so each
 * endpoint's knee can weigh its own server's gauges against its own slots.
 */
async function splitMeta(
  targets: RunTargets,
  first: ServerSelf | null,
  preflight: boolean,
  stop: StopSignal,
  run: Pick<RunConfig['run'], 'paired' | 'paired_mode'>,
): Promise<RunSplitMeta> {
  const selves = await Promise.all(
    targets.endpoints.map(({ endpoint }, e) =>
      e === 0 || !preflight ? first : readServerSelf(endpoint, { interrupt: stop.setupInterrupt }),
    ),
  )
  const shown = splitMetaOf(targets)
  return {
    endpoints: shown.endpoints.map((endpoint, e) => ({ ...endpoint, slots: selves[e]?.slots ?? null })),
    models: shown.models,
    ...(run.paired ? { paired: true as const } : {}),
    ...(run.paired && run.paired_mode === 'together' ? { paired_mode: 'together' as const } : {}),
  }
}

/** The capacity model's evidence, started with the calibration probes (kept before the load's records are watched). */
function modelEvidenceOf(meta: RunMeta, probes: readonly RequestRecord[]): ModelEvidence {
  const evidence = new ModelEvidence(soloLevel(meta))
  for (const record of probes) evidence.add(record)
  return evidence
}

/**
 * The result from the levels so far: with --repeat, each level's entry pooled from its runs
 * (poolRepeats) and the runs' own summaries, by run, for result.repeats.
 */
function resultOf(gradient: Gradient, drift: Drift | null = null): BenchResult {
  const { runs, meta } = gradient
  if (runs.length === 0) return finishResult(gradient.summaries, meta, evidenceOf(gradient, drift))
  const levels = gradient.summaries.map((summary) =>
    poolRepeats(
      runs.filter((run) => run.summary.value === summary.value).map((run) => run.summary),
      summary,
    ),
  )
  const byRun = Array.from({ length: meta.load.repeat ?? 1 }, (_, repeat) =>
    runs.filter((run) => run.repeat === repeat).map((run) => run.summary),
  ).filter((levels) => levels.length > 0)
  return finishResult(levels, meta, evidenceOf(gradient, drift), byRun)
}

/** What finishResult is given beside the levels: the drift control, the model's evidence, the targets' figures. */
function evidenceOf(gradient: Gradient, drift: Drift | null): Parameters<typeof finishResult>[2] {
  return {
    drift,
    model: gradient.modelEvidence.seen(),
    recheck: gradient.recheck,
    ramp: gradient.ramp,
    ...(gradient.targets === null ? {} : { targets: gradient.targets.figures }),
  }
}

/** The final result (partial when stopped) and the report drawn from it. */
async function finishRun(gradient: Gradient): Promise<RunOutcome> {
  const { options, meta, resultPath } = gradient
  // Interrupted: the level that was running is cut short and later levels are missing.
  meta.partial = options.stop.requested
  meta.finished_at = new Date().toISOString()
  await serverFiguresAtTheEnd(gradient)
  const result = resultOf(gradient, gradient.drift.result())
  writeJsonAtomic(resultPath, result)
  options.stop.enter('report')
  const reportNote = await writeReports(options.outDir, result, {
    parquet: options.config.run.export_parquet,
    // Interrupted during the load, or not asked for: the result is written, the drawing left to `report`.
    draw: meta.partial ? 'interrupted' : options.config.run.charts ? true : 'not asked',
    // The knees of other workloads are `report`'s to predict: the model's replays are nobody's wait here.
    predictKnees: false,
    // Written by this run a moment ago: read back without the schema check a foreign folder gets.
    ownRecords: true,
  })
  if (reportNote !== null) options.log(`note: ${reportNote}`)
  // A shard's summary is partial: the merged one is the job's answer (`merge` appends it).
  const stepSummary = options.shard === undefined ? appendStepSummary(options.outDir) : null
  if (stepSummary !== null) options.log(`summary.md appended to $GITHUB_STEP_SUMMARY (${stepSummary})`)
  return { kind: 'done', result, resultPath }
}

/**
 * A level summarized as it ended had no scrape after its end yet: with the last scrape taken, every
 * level's server figures are computed again, as `report` computes them from server-metrics.jsonl.
 */
async function serverFiguresAtTheEnd(gradient: Gradient): Promise<void> {
  const { scraper } = gradient
  if (scraper === null) return
  await scraper.stop()
  gradient.summaries = gradient.summaries.map((summary, i) =>
    withServerFigures(summary, gradient.windows[i] ?? null, scraper.scrapes, gradient.meta.percentiles),
  )
  gradient.runs = gradient.runs.map((run) => ({
    ...run,
    summary: withServerFigures(run.summary, run.window, scraper.scrapes, gradient.meta.percentiles),
  }))
  const { targets } = gradient
  if (targets !== null)
    targets.figures = gradient.meta.levels_run.map(({ value, client }) => ({
      level: value,
      figures: targets.levels.level(value, client, scraper.scrapes, gradient.meta.percentiles),
    }))
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

function progressLine(level: LevelFigures, mode: RunConfig['load']['mode'], meta: RunMeta): string {
  const ttft = level.ttft_ms.p50 == null ? '-' : `${level.ttft_ms.p50.toFixed(0)} ms`
  const bound = level.client.bound ? ` — CLIENT-BOUND: ${level.client.reasons.join('; ')}` : ''
  const lateness = latenessNote(level)
  const behind = lateness === null ? '' : ` — ${lateness}`
  const name =
    meta.trace !== undefined
      ? levelName(meta, level.value)
      : mode === 'request_rate'
        ? `rate ${level.value}/s`
        : `level ${level.value}`
  const c = level.connections
  const connections =
    c === undefined
      ? ''
      : `; connections ${c.opened} new, ${c.reused} reused${c.resent > 0 ? `, ${c.resent} resent` : ''}`
  return (
    `${name}: ${level.requests} requests, ${level.failed} failed, ` +
    (level.cancelled === undefined ? '' : `${level.cancelled} cancelled, `) +
    (level.embeddings === undefined
      ? `TTFT p50 ${ttft}, ${level.output_tokens_per_s.toFixed(1)} tok/s`
      : `E2E p50 ${level.e2e_ms.p50?.toFixed(0) ?? '-'} ms, ${level.embeddings.inputs_per_s} inputs/s`) +
    ` in ${level.duration_s.toFixed(1)} s${connections}${bound}${behind}`
  )
}

/** The flags of the run that ask a server for more than text: each one the server may refuse. */
function featuresOf(config: RunConfig): string[] {
  const { workload } = config
  return [
    ...(workload.tools === null ? [] : ['--tools']),
    ...(workload.response_schema === null ? [] : ['--response-schema']),
    ...(workload.images === null ? [] : ['--images']),
    ...(workload.audio === null ? [] : ['--audio']),
  ]
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000
}
