import { hostname } from 'node:os'
import type { Endpoint } from '../client/target.js'
import type { RunConfig } from '../config/types.js'
import type { LevelProgress } from '../report/progress.js'
import type { ShardInfo } from '../result/run-meta.js'
import { configDigest } from './plan/config-digest.js'
import { timedLevelSeconds } from './plan/level-plan.js'
import { refuseUnrunnable, shapedConfig } from './plan/run-shape.js'
import type { StartSchedule } from './plan/start-schedule.js'
import { defaultOutDir, freeFolderName, prepareResultFolder } from './result-folder.js'
import { type RunOutcome, runGradient } from './run-gradient.js'
import { estimateClockOffsetMs } from './setup/clock-offset.js'
import { endpointFromEnv } from './setup/resolve-endpoint.js'
import { firstEndpoint, type RunTargets, resolveTargets } from './setup/run-targets.js'
import { CoordinatorLink } from './shard/coordinator-link.js'
import { testClockShiftMs, wallClock } from './shard/shard-clock.js'
import type { StopSignal } from './stop-signal.js'

/**
 * One run (or one shard of a run spread over machines) from a loaded config: what a library user
 * calls, and what `llmbench run` calls after turning its flags into these options. `prepareRun`
 * decides everything that needs no request (the config's default sizing, the endpoints with their
 * keys, the result folder, the schedule); `startRun` then identifies the shard and runs the gradient:
 *
 *   const outcome = await startRun(prepareRun({ config, shard: { index: 0, count: 4 } }), { log, stop })
 */
export interface RunRequest {
  config: RunConfig
  /**
   * The first endpoint (base_url), resolved (resolveEndpoint); absent = the config's, with the key
   * from its environment variable (endpointFromEnv). The other endpoints are resolved beside it.
   */
  endpoint?: Endpoint
  /** Where the endpoints' keys and header variables are read; default process.env. */
  env?: NodeJS.ProcessEnv
  /** Notes said while the endpoints are resolved (a key not set, headers sent); default: none. */
  note?: (line: string) => void
  /** Shard `index` (0-based) of `count` of every level; null or absent = the whole run. */
  shard?: Pick<ShardInfo, 'index' | 'count'> | null
  /**
   * Wall-clock start of the first level (shards start together). Level k starts `level_span_s` after
   * level k-1; absent, the span is derived for timed levels and only the first level is scheduled
   * for counted ones. No schedule = now, levels back to back.
   */
  schedule?: { start_at_ms: number; level_span_s?: number | undefined }
  /** Replace the run already in the folder (that run's files only); without it such a folder is refused. */
  force?: boolean
  /** With a shard: the URL of `llmbench coordinate`, which starts and ends every level for all shards; null or absent = none. */
  coordinator?: string | null
}

/** A run with its folder ready and its schedule fixed; nothing has been sent yet. */
export interface PreparedRun {
  /** The config as the run uses it: levels nobody sized given the default precision (run/plan/run-shape.ts). */
  config: RunConfig
  /** The run's endpoints and (endpoint, model) targets, each with its own key and headers, resolved once. */
  targets: RunTargets
  /** The first endpoint (targets' first): the probes, the clock offset and the reads of the server go to it. */
  endpoint: Endpoint
  shard: Pick<ShardInfo, 'index' | 'count'> | null
  schedule: StartSchedule | undefined
  coordinator: string | null
  outDir: string
  /** What readying the folder removed (a failed preflight's files, or the run --force replaced); null = nothing. */
  replaced: string | null
}

/** What runs beside the run: where its lines go, who stops it, who draws its progress. */
export interface RunSession {
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void
  /** Lines said even when progress is not (--quiet): what the user cannot learn otherwise. Default: log. */
  notice?: (line: string) => void
  /** Requested by the caller (the CLI's signal handlers): stop issuing, drain, write a partial result. */
  stop: StopSignal
  /** Called every half second while a level runs. */
  progress?: (progress: LevelProgress) => void
}

export type StartOutcome =
  | RunOutcome
  /** Stopped while the shard was identified (its clock request cut): no request of the run was sent. */
  | { kind: 'interrupted-during-set-up' }

/**
 * Shapes the config (run/plan/run-shape.ts: a run it cannot make is a RunShapeError), resolves the
 * endpoints (an unsendable key is a ConfigError), names the result folder (config.run.out_dir, else a
 * free results/<time>-<model>[-shard-I-of-N]), readies it (a folder holding a run is refused unless
 * `force`: FolderInUseError; one that cannot be written: FolderUnwritableError) and fixes the
 * schedule. Before anything is sent.
 */
export function prepareRun(request: RunRequest): PreparedRun {
  const shard = request.shard ?? null
  // Decided here, not in the CLI: a program calling the library gets the run the command line gets.
  const config = shapedConfig(request.config, shard !== null)
  refuseUnrunnable(config, { sharded: shard !== null, scheduled: request.schedule !== undefined })
  const env = request.env ?? process.env
  const note = request.note ?? (() => {})
  const targets = resolveTargets(config, request.endpoint ?? endpointFromEnv(config, env, note), env, note)
  const outDir =
    config.run.out_dir ??
    freeFolderName(
      `${defaultOutDir(config.target.model)}${shard === null ? '' : `-shard-${shard.index}-of-${shard.count}`}`,
    )
  const replaced = prepareResultFolder(outDir, config.metrics.output_json, request.force === true)
  const schedule =
    request.schedule === undefined
      ? undefined
      : {
          start_at_ms: request.schedule.start_at_ms,
          level_span_s: request.schedule.level_span_s ?? derivedLevelSpan(config),
        }
  const coordinator = shard === null ? null : (request.coordinator ?? null)
  const endpoint = firstEndpoint(targets)
  return { config, targets, endpoint, shard, schedule, coordinator, outDir, replaced }
}

/** Identifies the shard (host, clock offset, config digest), then runs the gradient into the prepared folder. */
export async function startRun(run: PreparedRun, session: RunSession): Promise<StartOutcome> {
  const { config, targets, endpoint, schedule, outDir } = run
  const { log, stop } = session
  let shard: ShardInfo | undefined
  if (run.shard !== null) {
    shard = {
      ...run.shard,
      host: hostname(),
      start_at: schedule === undefined ? null : new Date(schedule.start_at_ms).toISOString(),
      clock_offset_ms: await estimateClockOffsetMs(endpoint, stop.setupInterrupt),
      config_digest: configDigest(config),
    }
    log(
      `shard ${shard.index}/${shard.count} on ${shard.host}` +
        (shard.clock_offset_ms === null ? '' : `, clock offset vs server ≈ ${shard.clock_offset_ms} ms`),
    )
    if (stop.requested) return { kind: 'interrupted-during-set-up' }
  }
  // Throws CoordinationError when the coordinator refuses the shard or cannot be reached.
  const link =
    shard === undefined || run.coordinator === null
      ? null
      : await CoordinatorLink.connect(
          run.coordinator,
          { shard: shard.index, count: shard.count, host: shard.host, config_digest: shard.config_digest },
          { clock: wallClock(testClockShiftMs()), stop, log },
        )
  if (shard !== undefined && link !== null) shard.coordinator = link.info
  try {
    return await runGradient({
      config,
      targets,
      outDir,
      log,
      stop,
      ...(session.notice ? { notice: session.notice } : {}),
      ...(session.progress ? { progress: session.progress } : {}),
      ...(shard ? { shard } : {}),
      ...(schedule ? { schedule } : {}),
      ...(link ? { coordination: link } : {}),
    })
  } finally {
    await link?.close()
  }
}

/**
 * Timed levels have a known length: warm-up allowance + windows + the drain of the last requests.
 * Counted levels do not, so only their first level is scheduled unless a span is given.
 */
function derivedLevelSpan(config: RunConfig): number | null {
  const { load, client } = config
  if (load.duration_per_level_s === null) return null
  const warmupAllowance = load.warmup_requests > 0 ? 10 : 0
  const drain = Math.min(client.timeout_s, 30)
  return warmupAllowance + timedLevelSeconds(load) + drain
}
