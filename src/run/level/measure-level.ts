import { performance } from 'node:perf_hooks'
import { CpuMeter, type LevelClientStats, LoopMonitor } from '../../metrics/client-health.js'
import type { RequestRecord } from '../../records/types.js'
import { type LevelProgress, ProgressTally } from '../../report/progress.js'
import type { RoundOutcome } from '../../schedule/level-runner.js'
import type { LevelShare } from '../../schedule/level-share.js'
import type { WorkerPool } from '../../worker/pool.js'
import type { OutputCheck } from '../../workload/output-check.js'
import { completeTokenCounts } from '../../workload/token-counts.js'
import type { PlannedPrompt } from '../plan/workload-plan.js'
import { closedByServer } from '../setup/connection-policy.js'
import type { StopSignal } from '../stop-signal.js'
import type { PrecisionWatch } from './precision-watch.js'
import { RecordIntake } from './record-intake.js'
import type { RecordSink } from './record-sink.js'

const PROGRESS_INTERVAL_MS = 500

export interface MeasureContext {
  pool: WorkerPool
  sink: RecordSink
  /** The run's prompts, looked up by a record's prompt id for the lengths it asked for. */
  planned: readonly PlannedPrompt[]
  countTokens: (text: string) => number
  /** --response-schema, --tools: checks each answer before its text is dropped; absent = nothing to check. */
  check?: OutputCheck
  /** Requests per level or seconds per level, for the live line. */
  requestsPerLevel: number | null
  durationPerLevelS: number | null
  /** Lets a second Ctrl-C complete and write the records still queued. */
  stop?: StopSignal
  /** Called every half second while the level runs (the CLI draws a live line on a TTY). */
  progress?: (progress: LevelProgress) => void
}

/** One level as it ran: how the client fared while sending it, and what each worker did. */
export interface MeasuredLevel {
  client: LevelClientStats
  outcomes: RoundOutcome[]
}

/**
 * Runs one level on the worker threads: every record completed (lengths asked for, token counts) and
 * kept as it arrives, the measured ones fed to the level's summary and its progress line (neither
 * keeps them); the main thread's CPU and loop watched from the start of the measured round.
 * `phase` 'control' or 'recheck': the level is the drift control or a search's answer measured again,
 * and its measured records are kept as such.
 */
export async function measureLevel(
  context: MeasureContext,
  level: LevelShare,
  summary: { add(record: RequestRecord): void },
  phase: 'measure' | 'control' | 'recheck' = 'measure',
  /** --precision: fed the measured records; it tells the threads `enough` when the figures are precise. */
  precision?: PrecisionWatch,
): Promise<MeasuredLevel> {
  const { pool, sink, planned, countTokens, progress } = context
  const tally = new ProgressTally()
  const unwatch = sink.watch({
    observe(record) {
      if (record.phase !== phase || record.level !== level.level) return
      summary.add(record)
      tally.add(record)
      precision?.add(record)
    },
  })
  const cpu = new CpuMeter()
  const mainLoop = new LoopMonitor('main')
  let measureStartedAt: number | null = null
  // The live line is a subscriber: it reads what the records say, the run does not wait for it.
  const ticker =
    progress === undefined
      ? null
      : setInterval(() => {
          const now = tally.progress(
            level.level,
            measureStartedAt === null,
            measureStartedAt ?? performance.now(),
            performance.now(),
            context.requestsPerLevel,
            context.durationPerLevelS,
          )
          const reached = precision?.progress() ?? null
          progress(reached === null ? now : { ...now, precision: reached })
        }, PROGRESS_INTERVAL_MS)
  const intake = new RecordIntake<RequestRecord>((record) => {
    // Stamped first: the usage check weighs the server's count against the max_tokens sent.
    stampRequested(record, planned)
    context.check?.check(record)
    completeTokenCounts(record, countTokens)
    if (record.phase === 'measure') record.phase = phase
    sink.keep(record)
  })
  // A second Ctrl-C writes what the sink holds: the records still queued go in first.
  const unregisterFlush = context.stop?.onFlush(() => {
    intake.drainNow()
    sink.flush()
  })
  try {
    const { loops, outcomes } = await pool.runLevel(
      level,
      (records) => intake.push(records),
      () => {
        measureStartedAt = performance.now()
        precision?.start()
        cpu.start()
        mainLoop.start()
      },
    )
    await intake.drained()
    loops.push(mainLoop.stop())
    const client: LevelClientStats = {
      cpu_percent: cpu.percent(),
      rss_mib: Math.round(process.memoryUsage().rss / 1048576),
      loops,
      ...openLoopStats(level.load, outcomes),
    }
    const closed = closedByServer(outcomes)
    if (closed !== undefined) client.connections = { closed_by_server: closed }
    return { client, outcomes }
  } finally {
    unregisterFlush?.()
    unwatch()
    if (ticker !== null) clearInterval(ticker)
  }
}

/** The plan's lengths, looked up by prompt id (records carry the id, not the prompt). */
function stampRequested(record: RequestRecord, planned: readonly PlannedPrompt[]): void {
  const prompt = planned[record.prompt_id % planned.length]
  if (prompt === undefined || record.prompt_id < 0) return
  record.requested_input_tokens = prompt.input_tokens
  record.requested_output_tokens = prompt.output_tokens
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
