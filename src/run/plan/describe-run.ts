import { availableParallelism, hostname } from 'node:os'
import { performance } from 'node:perf_hooks'
import { displayUrl } from '../../client/redact.js'
import type { RunConfig } from '../../config/types.js'
import { protocolOf } from '../../protocols/wire-protocol.js'
import type {
  CacheResetMeta,
  ConnectionPolicy,
  CostEstimate,
  RunMeta,
  ShardInfo,
  StaggerMeta,
} from '../../result/run-meta.js'
import { staggerSpreadMs } from '../../schedule/stagger.js'
import { TOOL_VERSION } from '../../version.js'
import { formatLength } from '../../workload/lengths.js'
import { levelRequestBudget } from '../level/precision-watch.js'
import { connectionWords } from '../setup/connection-policy.js'
import { levelValues, searchPlan, timedLevelSeconds } from './level-plan.js'
import type { PreparedWorkload } from './prepare-workload.js'

/** How the load is sent, in words, for meta.client.architecture. */
export function architecture(
  workers: number,
  connections: ConnectionPolicy,
  mode: RunConfig['load']['mode'],
): string {
  return `${workers} worker thread(s), each with its own event loop and connection pool (${connectionWords(connections, mode === 'request_rate')}); main thread writes records`
}

/**
 * How each level's streams start: spread over one request's projected duration (the warm probes',
 * see estimate.ts), a default without probes, or all at once when the user turned it off.
 */
export function describeStagger(
  config: RunConfig,
  estimate: CostEstimate | null,
  shard: ShardInfo | undefined = undefined,
): StaggerMeta {
  if (!config.load.stagger)
    return { spread_ms: 0, from: 'off', note: 'streams start together (--no-stagger): they may run in step' }
  // Each shard projects its own request time from its own probes and starts on its own: their
  // spreads would differ, and a merged level would not be the single process's level.
  if (shard !== undefined)
    return {
      spread_ms: 0,
      from: 'off',
      note: 'streams start together: the shards cannot agree on one spread',
    }
  // A session's later turns spend the level's request budget as they come: with staggered streams a
  // stream can claim a new session on the budget's last request, and the level overshoots it.
  if (config.workload.sessions || config.workload.jobs)
    return {
      spread_ms: 0,
      from: 'off',
      note: `streams start together: ${config.workload.jobs ? 'jobs' : 'sessions'} keep the request count only so`,
    }
  const projected = estimate?.request_seconds?.median
  const timed = config.load.duration_per_level_s === null ? null : timedLevelSeconds(config.load)
  const spread_ms = staggerSpreadMs(projected === undefined ? null : projected * 1000, timed)
  const basis =
    projected === undefined
      ? 'a default, without probes'
      : "three quarters of one request's duration, from the probes"
  return {
    spread_ms,
    from: projected === undefined ? 'default' : 'probes',
    note: `streams start staggered over ${spread_ms} ms (${basis}) so they are not in step`,
  }
}

/**
 * The run's meta before its first level: what was asked, how the load is sent, on which machine, and
 * with --reset-cache the call that empties the server's cache ("cache reset before each level via
 * POST /slots/{id}?action=erase", run/level/cache-reset.ts), whose resets the load then appends.
 */
export function describeRun(
  config: RunConfig,
  workers: number,
  prepared: PreparedWorkload,
  estimate: CostEstimate | null,
  shard: ShardInfo | undefined,
  connections: ConnectionPolicy,
  cacheReset: CacheResetMeta | null = null,
): RunMeta {
  const { load } = config
  const meta: RunMeta = {
    tool_version: TOOL_VERSION,
    started_at: new Date().toISOString(),
    finished_at: null,
    partial: true,
    target: {
      base_url: displayUrl(config.target.base_url),
      endpoint: config.target.endpoint,
      model: config.target.model,
      protocol: config.target.protocol,
    },
    workload: describeWorkload(config, prepared),
    load: describeLoad(config, estimate, shard),
    client: {
      timeout_s: config.client.timeout_s,
      retry: config.client.retry,
      workers,
      architecture: architecture(workers, connections, load.mode),
      connections,
      node_version: process.version,
      cpus: availableParallelism(),
      host: hostname(),
    },
    server_metrics: config.server_metrics.enabled ? { interval_s: config.server_metrics.interval_s } : null,
    percentiles: config.metrics.percentiles,
    slo: config.metrics.slo,
    pricing: config.pricing,
    estimate,
    time_origin_ms: performance.timeOrigin,
    levels_run: [],
  }
  if (shard !== undefined) meta.shard = shard
  if (cacheReset !== null) meta.cache_reset = cacheReset
  return meta
}

/** meta.load: how the load is sent (mode, levels, arrival or stagger) and how long each level lasts. */
function describeLoad(
  config: RunConfig,
  estimate: CostEstimate | null,
  shard: ShardInfo | undefined,
): RunMeta['load'] {
  const { load, workload } = config
  const rateMode = load.mode === 'request_rate'
  const metaLoad: RunMeta['load'] = {
    mode: load.mode,
    levels: levelValues(config),
    warmup_requests: load.warmup_requests,
    ...(load.repeat > 1 ? { repeat: load.repeat } : {}),
  }
  const search = searchPlan(config)
  if (search !== null) metaLoad.search = search
  // A trace's arrivals are its rows (meta.trace), not a process.
  if (rateMode && workload.trace === null) {
    metaLoad.arrival = load.arrival
    if (load.arrival === 'gamma') metaLoad.burstiness = load.burstiness
  }
  if (rateMode) metaLoad.max_in_flight = load.max_in_flight
  else if (load.ramp_s !== null)
    metaLoad.ramp = { from: 1, to: Math.max(...load.levels), seconds: load.ramp_s }
  else if (workload.trace === null) metaLoad.stagger = describeStagger(config, estimate, shard)
  // A trace's levels are its rows: neither a count nor a duration of the config's.
  const trace = workload.trace !== null
  if (load.requests_per_level !== null && !trace) metaLoad.requests_per_level = load.requests_per_level
  if (load.precision !== null)
    metaLoad.precision = {
      targets: load.precision,
      max_requests: levelRequestBudget(load) ?? load.requests_per_level ?? 0,
      max_duration_s: load.max_duration_per_level_s,
    }
  if (load.duration_per_level_s !== null && !trace) {
    metaLoad.duration_per_level = load.duration_per_level_s
    metaLoad.warmup_s = load.warmup_s
    metaLoad.cooldown_s = load.cooldown_s
  }
  return metaLoad
}

/** meta.workload: the requests' lengths, their source and what each one carries besides text. */
function describeWorkload(config: RunConfig, prepared: PreparedWorkload): RunMeta['workload'] {
  const { workload } = config
  const trace = workload.trace !== null
  return {
    input_tokens: prepared.plan.input_mean,
    output_tokens: prepared.plan.output_mean,
    input: trace ? 'trace' : workload.dataset === null ? formatLength(workload.input) : 'dataset',
    output: trace ? 'trace' : formatLength(workload.output),
    dataset: prepared.plan.source,
    tokenizer: prepared.plan.tokenizer,
    stream: config.client.stream && protocolOf(config.target.protocol).streams,
    profile: workload.profile,
    shared_prefix: workload.shared_prefix,
    ignore_eos: workload.ignore_eos,
    seed: workload.seed,
    calibration: prepared.calibration,
    ...(workload.images !== null
      ? { images: workload.images }
      : (prepared.plan.rows_with_images ?? 0) > 0
        ? { images: 'dataset' }
        : {}),
    ...(workload.audio === null ? {} : { audio: workload.audio }),
    ...(workload.response_schema === null ? {} : { response_schema: workload.response_schema }),
    ...(workload.tools === null ? {} : { tools: workload.tools, tool_choice: workload.tool_choice }),
    ...(workload.sessions
      ? {
          sessions: {
            turns: workload.dataset === null ? workload.turns : null,
            think_time_s: workload.think_time_s,
          },
        }
      : {}),
    ...(workload.jobs
      ? {
          jobs: {
            steps: workload.dataset === null ? workload.turns : null,
            fan_out: workload.dataset === null ? workload.fan_out : null,
            tool_wait_s: workload.dataset === null ? workload.tool_wait_s : null,
          },
        }
      : {}),
  }
}
