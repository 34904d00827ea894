import { runFailures } from '../analysis/run-gate.js'
import { proxyNote } from '../client/proxy.js'
import { displayUrl } from '../client/redact.js'
import type { Endpoint } from '../client/target.js'
import { configConflicts } from '../config/load.js'
import { underDrivenWarning } from '../config/plan-warnings.js'
import type { RunConfig } from '../config/types.js'
import { levelName } from '../metrics/level-name.js'
import { oldSloSpellingNote } from '../metrics/slo.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import { DiskFullError } from '../records/disk-full.js'
import { appendHistory, readHistory } from '../report/history.js'
import { writeHistoryHtml } from '../report/history-page.js'
import { formatProgress, type LevelProgress } from '../report/progress.js'
import { renderTable, renderVerdict } from '../report/terminal.js'
import { LiveMetricsError } from '../run/level/live-metrics.js'
import { describeDefaultSizing, levelRequestBudget } from '../run/level/precision-watch.js'
import { WorkloadError } from '../run/plan/prepare-workload.js'
import { describePairedSizing, RunShapeError } from '../run/plan/run-shape.js'
import { MAX_START_WAIT_MS, parseStartAt } from '../run/plan/start-schedule.js'
import { FolderInUseError, FolderUnwritableError } from '../run/result-folder.js'
import { INTERRUPT_GRACE_MS } from '../run/run-gradient.js'
import { fdLimitWarning } from '../run/setup/fd-limit.js'
import type { RunTargets } from '../run/setup/run-targets.js'
import { CoordinationError } from '../run/shard/coordinator-link.js'
import { parseShard } from '../run/shard/shard.js'
import {
  type PreparedRun,
  prepareRun,
  type RunRequest,
  type StartOutcome,
  startRun,
} from '../run/start-run.js'
import { type RunPhase, StopSignal } from '../run/stop-signal.js'
import { formatLength } from '../workload/lengths.js'
import { numberFlag, type ParsedFlags, stringFlag } from './args.js'
import { CliError, EXIT } from './exit-codes.js'
import { hintsFor, preflightSummaryNamed, withHintsNamed } from './hints-where-set.js'
import type { Io } from './io.js'
import { pairedGate } from './paired-gate.js'
import { tableWidth } from './table-width.js'
import { whereWritten } from './where-written.js'

/**
 * `run` and `demo` after their flags: the run's options from the flags, the plan line and notes,
 * Ctrl-C, the table, the exit code. The run itself (folder, shard, gradient) is run/start-run.ts.
 */

/** Runs a loaded config: plan line, Ctrl-C handling, the gradient, the table, the exit code. */
export async function executeRun(
  config: RunConfig,
  flags: ParsedFlags,
  io: Io,
  /** The endpoint to use; absent = the config's, with the key from its environment variable. */
  options: { endpoint?: Endpoint } = {},
): Promise<number> {
  const quiet = flags.quiet === true
  const log = (line: string): void => {
    if (!quiet) io.err(`${line}\n`)
  }
  if (config.run.fail_on_slo && Object.keys(config.metrics.slo).length === 0) {
    throw new CliError('--fail-on-slo needs objectives: set --slo (or [slo] in config.toml)', EXIT.usage)
  }
  // An SLO key in the spelling before one spelling per figure (ttft_p95_ms) is still read; said once, here.
  const oldSpelling = oldSloSpellingNote(config.metrics.slo)
  if (oldSpelling !== null) log(oldSpelling)
  const shard = resolveShard(flags, process.env)
  const schedule = resolveSchedule(flags)
  const coordinator = resolveCoordinator(flags, shard !== null, schedule !== undefined)
  // The run's shape (default sizing, combinations refused) and its endpoints, each with its own key,
  // are prepareRun's, as for a program using the library; resolving them says when a key is missing.
  const run = readyRun({
    config,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    note: log,
    shard,
    schedule,
    coordinator,
    force: flags.force === true,
  })
  for (const line of planLines(run, config, flags)) log(line)
  const stop = new StopSignal()
  const onSignal = (): void => {
    if (stop.requested) {
      stop.flushAll()
      io.err('second interrupt: exiting now; finished records are in requests.jsonl\n')
      process.exit(EXIT.interrupted)
    }
    stop.request()
    io.err(`${INTERRUPT_ANSWERS[stop.phase]}\n`)
  }
  // SIGHUP: the terminal or SSH session closed. Node's default is to die at once, losing the
  // in-flight requests and the partial result; it is an interrupt like the others.
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  try {
    // A live line only on a terminal; CI logs get the plain per-level lines.
    const live = !quiet && process.stderr.isTTY === true
    const progress = live ? (p: LevelProgress) => io.err(`\r\x1b[K${formatProgress(p)}`) : undefined
    const logLine = live ? (line: string) => log(`\r\x1b[K${line}`) : log
    let outcome: StartOutcome
    try {
      outcome = await startRun(run, {
        log: logLine,
        notice: (line) => io.err(`${line}\n`),
        stop,
        ...(progress ? { progress } : {}),
      })
    } catch (error) {
      if (error instanceof WorkloadError || error instanceof LiveMetricsError)
        throw new CliError(error.message, EXIT.usage)
      if (error instanceof DiskFullError) throw new CliError(error.message, EXIT.diskFull)
      if (error instanceof CoordinationError) throw new CliError(error.message, EXIT.coordination)
      throw error
    }
    return await exitCodeOf(outcome, { run, config, flags, io, stop, log })
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
  }
}

/** What is said before the run: the default sizing, the plan line, and notes on the settings. */
function planLines(run: PreparedRun, config: RunConfig, flags: ParsedFlags): string[] {
  const { endpoint } = run
  // Levels nobody sized were given the default precision by prepareRun (the library's choice too).
  const sizing = describeDefaultSizing(run.config.load) ?? describePairedSizing(config, run.config)
  return [
    ...(sizing === null ? [] : [sizing]),
    describePlan(run),
    proxyNote(endpoint.url, endpoint.proxy),
    underDrivenWarning(config.load),
    fdLimitWarning(config.load),
    run.replaced === null ? null : `note: ${run.replaced}`,
    ...ignoredFlags(config, flags).map((note) => `note: ${note}`),
    ...configConflicts(config).map((note) => `note: ${note}`),
  ].filter((line): line is string => line !== null)
}

/** The exit code of a run's outcome, with what it says on stdout and stderr. */
async function exitCodeOf(
  outcome: StartOutcome,
  context: {
    run: PreparedRun
    /** The config as loaded: where each setting was given (hintsFor) is known of this object. */
    config: RunConfig
    flags: ParsedFlags
    io: Io
    stop: StopSignal
    log: (line: string) => void
  },
): Promise<number> {
  const { run, config, flags, io, stop, log } = context
  const quiet = flags.quiet === true
  if (outcome.kind === 'interrupted-during-set-up') {
    io.err('interrupted during the set-up: no request of the run was sent\n')
    return EXIT.interrupted
  }
  if (outcome.kind === 'preflight-failed') {
    io.err(
      `${preflightSummaryNamed(outcome.preflight.summary, hintsFor(config))}\n  (skip this check with --no-preflight)\n`,
    )
    return EXIT.preflight
  }
  if (outcome.kind === 'interrupted-before-load') {
    io.err(`interrupted during the ${outcome.phase}: no level was run; no result folder was written\n`)
    return EXIT.interrupted
  }
  if (outcome.kind === 'over-budget' || outcome.kind === 'cache-reset-refused') {
    io.err(`llmbench: not started: ${outcome.reason}\n`)
    return EXIT.usage
  }
  const { result } = outcome
  if (flags.json === true) io.out(`${JSON.stringify(result, null, 2)}\n`)
  else
    io.out(
      `${renderTable(result, { width: tableWidth(flags) })}\n${renderVerdict(withHintsNamed(result, hintsFor(config)), { calibrationSaid: !quiet })}\n` +
        `${whereWritten(run.outDir, config.metrics.output_json).join('\n')}\n`,
    )
  if (config.run.history_dir !== null) {
    log(`history: appended to ${appendHistory(config.run.history_dir, result)}`)
    log(`history: ${await historyPage(config.run.history_dir)}`)
  }
  // The coordinator (or this shard) ended the run as a shard was lost: its own exit code, not an interrupt's.
  const cut = result.meta.shard?.coordinator?.ended ?? null
  if (cut !== null) {
    io.err(
      `coordinated run ended: ${cut.reason} at ${new Date(cut.at_ms).toISOString()}; the level in progress is marked incomplete\n`,
    )
    return EXIT.coordination
  }
  if (stop.requested) return EXIT.interrupted
  const failures = runFailures(result.levels, config.metrics.min_success_rate, (value) =>
    levelName(result.meta, value),
  )
  if (failures.length > 0) {
    io.err(
      `Run failed (exit 1): it measured nothing to trust:\n${failures.map((f) => `  ${f}`).join('\n')}\n`,
    )
    return EXIT.gateFailed
  }
  if (config.run.fail_on_slo && result.capacity === null) {
    io.err(`SLO gate failed: ${result.capacity_summary}\n`)
    return EXIT.gateFailed
  }
  // Judged only on a whole run: an interrupted or failed one returned above and never says pass.
  if (config.run.gate) return pairedGate(run.outDir, io, config.run)
  return EXIT.ok
}

/** What the first interrupt does, said at once, in each phase of the run. */
const INTERRUPT_ANSWERS: Record<RunPhase, string> = {
  'set-up': 'interrupt: stopping before the load; nothing more is sent',
  load: `interrupt: no new requests; waiting up to ${INTERRUPT_GRACE_MS / 1000} s for in-flight ones, then writing the partial result, without charts (Ctrl-C again to quit now)`,
  report:
    'interrupt: every level is measured and the result is written; finishing the report (Ctrl-C again to skip it)',
}

/** Signals that stop a run: no new requests, in-flight ones drain, the partial result is written. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * One result folder, one run: a folder holding a run is refused unless --force, and settings no run
 * can take are a usage error (before anything is sent).
 */
function readyRun(request: RunRequest): PreparedRun {
  try {
    return prepareRun(request)
  } catch (error) {
    if (
      error instanceof FolderInUseError ||
      error instanceof FolderUnwritableError ||
      error instanceof RunShapeError
    )
      throw new CliError(error.message, EXIT.usage)
    throw error
  }
}

function describePlan(run: PreparedRun): string {
  const { config, endpoint, outDir } = run
  const { load, workload } = config
  const window =
    load.warmup_s > 0 || load.cooldown_s > 0
      ? ` (+${load.warmup_s} s warm-up, +${load.cooldown_s} s cool-down)`
      : ''
  const bound =
    load.duration_per_level_s !== null
      ? `${load.duration_per_level_s} s${window}`
      : load.precision !== null
        ? `${load.requests_per_level}–${levelRequestBudget(load)} requests until ${Object.entries(
            load.precision,
          )
            .map(([key, pct]) => `${key} ±${pct}%`)
            .join(
              ', ',
            )}${load.max_duration_per_level_s === null ? '' : ` (at most ${load.max_duration_per_level_s} s)`}`
        : `${load.requests_per_level} requests`
  const levels =
    load.mode === 'request_rate'
      ? `rates ${load.rates.join(',')}/s (${load.arrival}${load.arrival === 'gamma' ? ` k=${load.burstiness}` : ''})`
      : `levels ${load.levels.join(',')}`
  const input = workload.dataset === null ? formatLength(workload.input) : `dataset ${workload.dataset}`
  // A trace brings its own rows, lengths and clock.
  if (workload.trace !== null)
    return (
      `llmbench: ${config.target.model} at ${displayUrl(endpoint.url)}: ` +
      `trace ${workload.trace} at speed ${workload.trace_speeds.map((speed) => `${speed}x`).join(', ')} ` +
      `(+${load.warmup_requests} warm-up per level), ${config.client.stream ? 'streaming' : 'not streaming'} -> ${outDir}`
    )
  return (
    `llmbench: ${config.target.model} at ${displayUrl(endpoint.url)}${config.run.paired ? pairedWords(run.targets, config.run.paired_mode) : splitWords(run.targets)}: ` +
    `${levels}, ${bound} per level (+${load.warmup_requests} warm-up), ` +
    // A protocol that generates nothing (embeddings): only the input length means anything.
    `input ${input}${protocolOf(endpoint.protocol).generatesTokens ? ` / output ${formatLength(workload.output)} tokens` : ` tokens (${endpoint.protocol})`}${workload.profile === null ? '' : ` (profile ${workload.profile})`}, ` +
    `${endpoint.stream ? 'streaming' : 'not streaming'} -> ${outDir}`
  )
}

/** Several endpoints or models: how many more, and how each level is shared between them (the resolved list's). */
function splitWords(targets: RunTargets): string {
  const { endpoints, models } = targets
  if (endpoints.length * models.length === 1) return ''
  const weights = (list: readonly { weight: number }[]): string =>
    list.every((item) => item.weight === list[0]?.weight)
      ? 'equal shares'
      : `weights ${list.map((item) => item.weight).join(':')}`
  const parts = [
    ...(endpoints.length > 1 ? [`+${endpoints.length - 1} more endpoint(s), ${weights(endpoints)}`] : []),
    ...(models.length > 1
      ? [`models ${models.map((model) => model.id).join(', ')}, ${weights(models)}`]
      : []),
  ]
  return ` (${parts.join('; ')}; each given its share of every level)`
}

/** --paired: B beside A, each given the whole level in its blocks (never a share of it). */
function pairedWords(targets: RunTargets, mode: RunConfig['run']['paired_mode']): string {
  const { endpoints, models } = targets
  const second = endpoints[1]
  const b = second === undefined ? models[1]?.id : displayUrl(second.endpoint.url)
  const how = mode === 'together' ? 'both loaded together' : 'taking turns'
  return ` (A) against ${b} (B), paired: each given the whole level in its blocks, ${how}`
}

/** Flags a trace replay has no use for: its rows are the arrivals, the requests and their lengths. */
const TRACE_IGNORES = [
  'mode',
  'levels',
  'rates',
  'arrival',
  'burstiness',
  'requests',
  'duration',
  'input-tokens',
  'output-tokens',
  'dataset',
  'profile',
  'shared-prefix',
]

/** Flags that the chosen mode does not use: said, so a typo'd mode does not go unnoticed. */
function ignoredFlags(config: RunConfig, flags: ParsedFlags): string[] {
  if (config.workload.trace !== null) {
    const unused = TRACE_IGNORES.filter((name) => flags[name] !== undefined)
    return unused.length === 0
      ? []
      : [
          `${unused.map((name) => `--${name}`).join(', ')} ${unused.length === 1 ? 'does' : 'do'} not apply with --trace: the trace gives the arrivals and lengths`,
        ]
  }
  const rateOnly = ['rates', 'arrival', 'burstiness', 'max-in-flight'].filter(
    (name) => flags[name] !== undefined,
  )
  if (config.load.mode === 'concurrency' && rateOnly.length > 0)
    return [`${rateOnly.map((name) => `--${name}`).join(', ')} only apply with --mode rate`]
  if (config.load.mode === 'request_rate' && flags.levels !== undefined)
    return ['--levels does not apply in request-rate mode: the levels are --rates']
  return []
}

/** --coordinator URL: only for a shard, and instead of --start-at (the coordinator says when each level starts). */
function resolveCoordinator(flags: ParsedFlags, sharded: boolean, scheduled: boolean): string | null {
  const text = stringFlag(flags, 'coordinator')
  if (text === undefined) return null
  if (!sharded)
    throw new CliError(
      '--coordinator needs --shard I/N (or JOB_COMPLETION_INDEX): it coordinates shards',
      EXIT.usage,
    )
  if (scheduled)
    throw new CliError(
      '--coordinator cannot be combined with --start-at: the coordinator says when each level starts',
      EXIT.usage,
    )
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new CliError(
      `--coordinator: expected a URL (http://host:port), got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  }
  if (url.protocol !== 'http:')
    throw new CliError(`--coordinator: expected an http:// URL, got ${JSON.stringify(text)}`, EXIT.usage)
  return url.origin
}

/** --shard I/N, else Kubernetes Indexed Job variables; null = the whole run. */
export function resolveShard(
  flags: ParsedFlags,
  env: NodeJS.ProcessEnv,
): { index: number; count: number } | null {
  const text = stringFlag(flags, 'shard')
  if (text !== undefined) {
    const shard = parseShard(text)
    if (shard === null)
      throw new CliError(
        `--shard: expected I/N with 0 ≤ I < N (e.g. 0/4), got ${JSON.stringify(text)}`,
        EXIT.usage,
      )
    return shard
  }
  const index = env.JOB_COMPLETION_INDEX
  const count = env.JOB_COMPLETIONS
  if (index === undefined || count === undefined || index === '' || count === '') return null
  const shard = parseShard(`${index}/${count}`)
  if (shard === null)
    throw new CliError(
      `JOB_COMPLETION_INDEX=${index} and JOB_COMPLETIONS=${count}: expected 0 ≤ index < completions`,
      EXIT.usage,
    )
  return shard
}

/**
 * --start-at (and --level-span): when each level starts on the wall clock; undefined = now, back to
 * back. Without --level-span the run derives the span (see prepareRun).
 */
function resolveSchedule(flags: ParsedFlags): RunRequest['schedule'] {
  const text = stringFlag(flags, 'start-at')
  const spanFlag = numberFlag(flags, 'level-span')
  if (text === undefined) {
    if (spanFlag !== undefined) throw new CliError('--level-span needs --start-at', EXIT.usage)
    return undefined
  }
  const startAt = parseStartAt(text)
  if (startAt === null)
    throw new CliError(
      `--start-at: expected an ISO time or epoch seconds, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  if (startAt - Date.now() > MAX_START_WAIT_MS)
    throw new CliError(`--start-at ${text} is more than a day away: is the date right?`, EXIT.usage)
  if (spanFlag !== undefined && !(spanFlag > 0))
    throw new CliError(
      `--level-span: expected a positive number of seconds, got ${stringFlag(flags, 'level-span')}`,
      EXIT.usage,
    )
  return { start_at_ms: startAt, level_span_s: spanFlag }
}

/** The trend page beside history.jsonl; a history file it cannot read is named, not a failed run. */
async function historyPage(dir: string): Promise<string> {
  try {
    return `trend in ${await writeHistoryHtml(dir, readHistory(dir))}`
  } catch (error) {
    return `trend not drawn: ${error instanceof Error ? error.message : String(error)}`
  }
}
