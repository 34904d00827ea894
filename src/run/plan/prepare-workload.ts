import { availableParallelism } from 'node:os'
import { bodyOptionsOf, type Endpoint } from '../../client/target.js'
import type { RunConfig } from '../../config/types.js'
import { carriersInWords } from '../../protocols/capabilities.js'
import { promptText } from '../../protocols/prompt.js'
import type { StructuredOutput } from '../../protocols/structured-parts.js'
import { protocolOf } from '../../protocols/wire-protocol.js'
import type { RequestRecord } from '../../records/types.js'
import type { Calibration } from '../../result/run-meta.js'
import { type Dataset, DatasetError, loadDataset } from '../../workload/dataset.js'
import { ExactPromptSource } from '../../workload/exact-prompts.js'
import type { JobSet } from '../../workload/jobs.js'
import { meanLength } from '../../workload/lengths.js'
import { mediaBudget } from '../../workload/media-budget.js'
import type { BodyOptions } from '../../workload/request-body.js'
import type { SessionSet } from '../../workload/sessions.js'
import { loadStructuredOutput, StructuredOutputError } from '../../workload/structured-output.js'
import { loadTokenizer, type Tokenizer, TokenizerError } from '../../workload/tokenizers.js'
import { TraceError } from '../../workload/trace-file.js'
import type { TraceReplay } from '../../workload/trace-replay.js'
import { levelRequestBudget } from '../level/precision-watch.js'
import { calibrate, localLength } from '../setup/calibrate.js'
import { jobMeans, planJobs } from './job-plan.js'
import { controlRequests, plansControl } from './level-plan.js'
import { planSessions, sessionMeans } from './session-plan.js'
import { loadConfiguredTrace, planTraceWorkload, traceWarmupPrompts } from './trace-plan.js'
import { resolveWorkers } from './worker-count.js'
import { planWorkload, type WorkloadPlan } from './workload-plan.js'

/** Distinct synthetic prompts at most; request i uses prompt i mod this. */
export const DISTINCT_PROMPTS = 512
/** Dataset entries read at most: more would only cost start-up time and memory. */
const MAX_DATASET_ENTRIES = 10_000

/** The workload cannot be built: a bad tokenizer or dataset file. Exit 2, like a config error. */
export class WorkloadError extends Error {
  override name = 'WorkloadError'
}

/** What the prompts are made from, loaded before anything is sent (so bad files fail first). */
export interface WorkloadSources {
  tokenizer: Tokenizer
  dataset: Dataset | null
  /** The trace window replayed (--trace), row i sending body i; null = none. */
  trace: TraceReplay | null
  /** --sessions: the conversations to run turn by turn (the dataset is then read as these, not as prompts). */
  sessions: SessionSet | null
  /** --jobs: the jobs to run turn by turn (the dataset is then read as a job file). */
  jobs: JobSet | null
  prompts: ExactPromptSource
  /** Expected mean lengths per request: the plan's figures for the cost estimate. */
  input_mean: number
  output_mean: number
  /** --response-schema, --tools: what chat bodies carry beside the prompt; null = neither. */
  structured: StructuredOutput | null
}

export interface PreparedWorkload {
  plan: WorkloadPlan
  calibration: Calibration | { skipped: string } | null
  /** Calibration probes: written to requests.jsonl (they were sent and billed) but not measured. */
  probeRecords: RequestRecord[]
}

export function loadWorkloadSources(config: RunConfig): WorkloadSources {
  const { workload } = config
  let tokenizer: Tokenizer
  let dataset: Dataset | null = null
  let trace: TraceReplay | null = null
  let sessions: SessionSet | null = null
  let jobs: JobSet | null = null
  let structured: StructuredOutput | null = null
  try {
    structured = loadStructuredOutput(workload)
    trace = loadConfiguredTrace(config)
    tokenizer = loadTokenizer(workload.tokenizer)
    if (workload.sessions) sessions = planSessions(config, tokenizer, sessionRequests(config))
    else if (workload.jobs) jobs = planJobs(config, tokenizer, sessionRequests(config))
    else if (workload.dataset !== null)
      dataset = loadDataset(workload.dataset, (text) => tokenizer.count(text), {
        maxEntries: MAX_DATASET_ENTRIES,
      })
  } catch (error) {
    if (
      error instanceof TokenizerError ||
      error instanceof DatasetError ||
      error instanceof TraceError ||
      error instanceof StructuredOutputError
    )
      throw new WorkloadError(error.message)
    throw error
  }
  // A row's own images need a protocol with image parts (as --images does: config/load.ts).
  if (
    dataset?.entries.some((entry) => entry.images !== undefined) === true &&
    !protocolOf(config.target.protocol).carries.images
  )
    throw new WorkloadError(
      `dataset ${dataset.path}: its rows carry images, which the ${config.target.protocol} protocol cannot send (use ${carriersInWords('images')})`,
    )
  const prompts = new ExactPromptSource(tokenizer, {
    seed: workload.seed,
    sharedPrefixTokens: workload.shared_prefix,
  })
  let inputMean = meanLength(workload.input, workload.input_tokens)
  let outputMean = meanLength(workload.output, workload.output_tokens)
  if (dataset !== null) {
    const entries = dataset.entries
    inputMean = entries.reduce((sum, e) => sum + tokenizer.count(promptText(e.messages)), 0) / entries.length
    if (workload.output.kind === 'dataset')
      outputMean =
        entries.reduce((sum, e) => sum + (e.output_tokens ?? workload.output_tokens), 0) / entries.length
  }
  if (trace !== null) {
    inputMean = trace.rows.reduce((sum, row) => sum + row.input_tokens, 0) / trace.rows.length
    outputMean = trace.rows.reduce((sum, row) => sum + row.output_tokens, 0) / trace.rows.length
  }
  if (sessions !== null) {
    const means = sessionMeans(sessions.sessions, (text) => tokenizer.count(text))
    inputMean = means.input_mean
    outputMean = means.output_mean
  }
  if (jobs !== null) {
    const means = jobMeans(jobs.jobs, (text) => tokenizer.count(text))
    inputMean = means.input_mean
    outputMean = means.output_mean
  }
  return {
    tokenizer,
    dataset,
    trace,
    sessions,
    jobs,
    prompts,
    input_mean: Math.round(inputMean),
    output_mean: Math.round(outputMean),
    structured,
  }
}

/**
 * Prompts kept for the drift control alone: as many as it may send (run-gradient.ts) times the load
 * threads (thread w of W takes ids w, w + W, ...: a single busy thread reaches one id in W), so no
 * control prompt is sent twice.
 */
function controlReserve(config: RunConfig): number {
  const { load, workload } = config
  const first = load.levels[0]
  if (!plansControl(config) || load.levels.length < 2 || first === undefined || workload.dataset !== null)
    return 0
  const requests = controlRequests(levelRequestBudget(load) ?? load.requests_per_level ?? 24, first)
  const threads = resolveWorkers(config.run.workers, load.levels, availableParallelism(), load.mode)
  return Math.min(512, requests * threads)
}

/** The bodies' options: the endpoint's, with the structured output's fields when there are any. */
function bodyOf(endpoint: Endpoint, structured: StructuredOutput | null): BodyOptions {
  const body = bodyOptionsOf(endpoint)
  return structured === null ? body : { ...body, structured }
}

/** Requests a session run sends over all its levels (warm-up included), unbounded for timed levels. */
function sessionRequests(config: RunConfig): number {
  const { load } = config
  if (load.requests_per_level === null) return Number.POSITIVE_INFINITY
  return ((levelRequestBudget(load) ?? load.requests_per_level) + load.warmup_requests) * load.levels.length
}

/**
 * Calibration against the server (synthetic prompts only: a dataset's prompts are what they are),
 * then every request body, before any clock starts. `plannedRequests` caps the distinct synthetic
 * prompts for small runs.
 */
export async function prepareWorkload(
  config: RunConfig,
  endpoint: Endpoint,
  sources: WorkloadSources,
  plannedRequests: number,
  log: (line: string) => void,
  interrupt?: AbortSignal,
): Promise<PreparedWorkload> {
  let calibration: PreparedWorkload['calibration'] = null
  const probeRecords: RequestRecord[] = []
  // Calibration is part of the preflight: --no-preflight sends nothing before the load. A trace's
  // lengths are the trace's, like a dataset's prompts: not resized.
  if (
    sources.dataset === null &&
    sources.trace === null &&
    sources.sessions === null &&
    sources.jobs === null &&
    config.workload.calibrate &&
    config.run.preflight
  ) {
    const outcome = await calibrate(
      endpoint,
      sources.prompts,
      sources.input_mean,
      config.workload.tokenizer,
      interrupt,
    )
    probeRecords.push(...outcome.records)
    calibration = outcome.ok ? outcome.calibration : { skipped: outcome.reason }
    // Interrupted: the caller says so; "calibration skipped" would read as the server's doing.
    if (interrupt?.aborted !== true)
      log(outcome.ok ? outcome.calibration.summary : `calibration skipped: ${outcome.reason}`)
  }
  const fitted = calibration !== null && 'slope' in calibration ? calibration : null
  // Sessions' and jobs' bodies are built turn by turn on the workers, from the specs and the replies.
  const turnByTurn =
    sources.sessions !== null
      ? { source: sources.sessions.source, sessions: sources.sessions.sessions }
      : sources.jobs !== null
        ? { source: sources.jobs.source, jobs: sources.jobs.jobs }
        : null
  if (turnByTurn !== null) {
    const plan: WorkloadPlan = {
      prompts: [],
      ...turnByTurn,
      ...(sources.structured === null ? {} : { structured: sources.structured }),
      input_mean: sources.input_mean,
      output_mean: sources.output_mean,
      tokenizer: sources.tokenizer.name,
    }
    return { plan, calibration, probeRecords }
  }
  if (sources.trace !== null) {
    const plan = planTraceWorkload(
      sources.trace,
      { ...sources, body: bodyOf(endpoint, sources.structured) },
      traceWarmupPrompts(config.load),
    )
    if (plan.off_length > 0)
      log(
        `warning: ${plan.off_length} of ${plan.prompts.length} trace prompts do not count exactly their input_length under ${plan.tokenizer}`,
      )
    return { plan, calibration, probeRecords }
  }
  let media: ReturnType<typeof mediaBudget>
  try {
    media = mediaBudget(config.workload, Math.max(1, Math.min(DISTINCT_PROMPTS, plannedRequests)))
  } catch (error) {
    if (error instanceof RangeError) throw new WorkloadError(error.message)
    throw error
  }
  if (media.note !== null) log(media.note)
  const plan = planWorkload(config, {
    body: bodyOf(endpoint, sources.structured),
    tokenizer: sources.tokenizer,
    prompts: sources.prompts,
    dataset: sources.dataset,
    localLength: (tokens) => localLength(fitted, tokens),
    distinct: media.distinct,
    controlReserve: controlReserve(config),
  })
  return { plan, calibration, probeRecords }
}
