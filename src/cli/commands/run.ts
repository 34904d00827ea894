import { hostname } from 'node:os'
import { join } from 'node:path'
import { runFailures } from '../../analysis/run-gate.js'
import { endpointFromEnv, resolveEndpoint } from '../../client/endpoint.js'
import { displayUrl } from '../../client/redact.js'
import { ConfigError } from '../../config/errors.js'
import { DEFAULTS, loadRunConfig } from '../../config/load.js'
import type { ConfigFlags, RunConfig } from '../../config/types.js'
import { joinUrl } from '../../config/url.js'
import { DiskFullError } from '../../records/disk-full.js'
import { appendHistory } from '../../report/history.js'
import { formatProgress, type LevelProgress } from '../../report/progress.js'
import { renderTable, renderVerdict } from '../../report/terminal.js'
import { levelName } from '../../report/workload-notes.js'
import { estimateClockOffsetMs } from '../../run/clock-offset.js'
import { configDigest } from '../../run/config-digest.js'
import { fdLimitWarning } from '../../run/fd-limit.js'
import { timedLevelSeconds } from '../../run/level-plan.js'
import { underDrivenWarning } from '../../run/plan-warnings.js'
import { WorkloadError } from '../../run/prepare-workload.js'
import {
  FolderInUseError,
  FolderUnwritableError,
  freeFolderName,
  prepareResultFolder,
} from '../../run/result-folder.js'
import { runGradient } from '../../run/run-gradient.js'
import { parseShard, type ShardInfo } from '../../run/shard.js'
import { MAX_START_WAIT_MS, parseStartAt, type StartSchedule } from '../../run/start-schedule.js'
import { type RunPhase, StopSignal } from '../../run/stop-signal.js'
import { formatLength } from '../../workload/lengths.js'
import {
  type CommandSpec,
  type FlagSpec,
  numberFlag,
  numberList,
  type ParsedFlags,
  parseFlags,
  renderHelp,
  stringFlag,
} from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

/** Flags that shape the load and the output; shared by `run` and `demo`. */
export const LOAD_FLAGS: FlagSpec[] = [
  {
    name: 'mode',
    type: 'string',
    value: 'concurrency|rate',
    help: 'closed loop per concurrency level, or open loop per request rate',
    default: 'concurrency',
  },
  {
    name: 'levels',
    type: 'string',
    value: '1,4,8',
    help: 'concurrency levels',
    default: DEFAULTS.load.levels.join(','),
  },
  {
    name: 'rates',
    type: 'string',
    value: '1,2,4',
    help: 'request rates per second (--mode rate)',
    default: DEFAULTS.load.rates.join(','),
  },
  {
    name: 'arrival',
    type: 'string',
    value: 'constant|poisson|gamma',
    help: 'arrival process of --mode rate',
    default: DEFAULTS.load.arrival,
  },
  {
    name: 'burstiness',
    type: 'string',
    value: 'K',
    help: 'gamma shape: below 1 burstier than Poisson, above 1 smoother',
    default: '1',
  },
  {
    name: 'max-in-flight',
    type: 'string',
    value: 'N',
    help: 'rate mode: most requests in flight; later arrivals wait, and it shows',
    default: String(DEFAULTS.load.max_in_flight),
  },
  {
    name: 'requests',
    type: 'string',
    value: 'N',
    help: 'measured requests per level',
    default: String(DEFAULTS.load.requests_per_level),
  },
  { name: 'duration', type: 'string', value: 'SECONDS', help: 'per level, instead of --requests' },
  {
    name: 'warmup-seconds',
    type: 'string',
    value: 'SECONDS',
    help: 'timed levels: excluded window before the measured one',
    default: '0',
  },
  {
    name: 'cooldown-seconds',
    type: 'string',
    value: 'SECONDS',
    help: 'timed levels: load kept on after the measured window, excluded',
    default: '0',
  },
  {
    name: 'warmup',
    type: 'string',
    value: 'N',
    help: 'warm-up requests per level, excluded from figures',
    default: String(DEFAULTS.load.warmup_requests),
  },
  {
    name: 'input-tokens',
    type: 'string',
    value: 'N',
    help: 'prompt length: N, normal(MEAN,SD), uniform(MIN,MAX) or dataset',
    default: String(DEFAULTS.workload.input_tokens),
  },
  {
    name: 'output-tokens',
    type: 'string',
    value: 'N',
    help: 'max_tokens per request: N, normal(MEAN,SD), uniform(MIN,MAX) or dataset',
    default: String(DEFAULTS.workload.output_tokens),
  },
  {
    name: 'profile',
    type: 'string',
    value: 'NAME|FILE',
    help: 'workload preset: chat, rag, codegen, or a profile file',
  },
  { name: 'dataset', type: 'string', value: 'FILE', help: 'prompts from JSONL or ShareGPT JSON' },
  {
    name: 'tokenizer',
    type: 'string',
    value: 'NAME|FILE',
    help: 'o200k, cl100k or a tokenizer.json',
    default: DEFAULTS.workload.tokenizer,
  },
  {
    name: 'shared-prefix',
    type: 'string',
    value: 'N',
    help: 'tokens every prompt shares (prefix-cache test)',
    default: '0',
  },
  { name: 'ignore-eos', type: 'boolean', help: 'send ignore_eos and min_tokens (vLLM, SGLang, TGI)' },
  {
    name: 'no-calibrate',
    type: 'boolean',
    help: "skip sizing prompts by the server's prompt_tokens (part of the preflight)",
  },
  { name: 'seed', type: 'string', value: 'N', help: 'seed of prompts, lengths and arrivals', default: '1' },
  {
    name: 'max-cost',
    type: 'string',
    value: 'AMOUNT',
    help: 'refuse to start when the estimated cost is above it',
  },
  {
    name: 'timeout',
    type: 'string',
    value: 'SECONDS',
    help: 'whole-request timeout',
    default: String(DEFAULTS.client.timeout_s),
  },
  {
    name: 'connect-timeout',
    type: 'string',
    value: 'SECONDS',
    help: 'connection set-up timeout',
    default: '10',
  },
  {
    name: 'first-token-timeout',
    type: 'string',
    value: 'SECONDS',
    help: 'send-to-first-token timeout',
    default: 'the whole-request timeout',
  },
  {
    name: 'idle-timeout',
    type: 'string',
    value: 'SECONDS',
    help: 'longest silence between two reads of a response',
    default: '60',
  },
  { name: 'retry', type: 'string', value: 'N', help: 'retries per failed request', default: '0' },
  {
    name: 'workers',
    type: 'string',
    value: 'N|auto',
    help: 'load-generating threads (auto: one per core, at most one per stream)',
    default: 'auto',
  },
  {
    name: 'out',
    type: 'string',
    value: 'DIR',
    help: 'the result folder itself',
    default: 'results/<time>-<model>',
  },
  { name: 'force', type: 'boolean', help: "replace the run already in --out (that run's files only)" },
  {
    name: 'slo',
    type: 'string',
    value: 'KEY=MS,...',
    help: 'objectives, e.g. ttft_p95_ms=800,tpot_p95_ms=50 (metrics ttft, tpot, e2e)',
  },
  { name: 'fail-on-slo', type: 'boolean', help: 'exit 1 when no level meets every SLO' },
  {
    name: 'min-success-rate',
    type: 'string',
    value: 'PERCENT',
    help: "exit 1 when the lowest level's success rate is below it (0 = off)",
    default: String(DEFAULTS.metrics.min_success_rate),
  },
  { name: 'refine', type: 'boolean', help: 'bisect around the knee with up to 3 extra levels' },
  { name: 'history', type: 'string', value: 'DIR', help: "append this run's summary to DIR/history.jsonl" },
  { name: 'no-preflight', type: 'boolean', help: 'skip the one-request check before the first level' },
  { name: 'no-keepalive', type: 'boolean', help: 'open a new connection for every request' },
  { name: 'quiet', type: 'boolean', help: 'no progress lines on stderr' },
  { name: 'json', type: 'boolean', help: 'print bench_result.json to stdout instead of the table' },
]

export const RUN_SPEC: CommandSpec = {
  name: 'run',
  summary: 'Run the concurrency gradient against an OpenAI-compatible endpoint and write the result folder.',
  usage: 'llmbench run [-c settings.json] [-c config.toml] [flags]',
  flags: [
    {
      name: 'config',
      short: 'c',
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'settings.json or config.toml (repeatable)',
    },
    { name: 'base-url', type: 'string', value: 'URL', help: 'server base URL, with or without /v1' },
    {
      name: 'endpoint',
      type: 'string',
      value: 'PATH',
      help: 'endpoint path',
      default: DEFAULTS.target.endpoint,
    },
    { name: 'model', type: 'string', value: 'ID', help: 'model id' },
    {
      name: 'api-key-env',
      type: 'string',
      value: 'NAME',
      help: 'environment variable holding the API key',
      default: DEFAULTS.target.api_key_env,
    },
    { name: 'no-stream', type: 'boolean', help: 'send stream:false (TTFT then has no meaning)' },
    ...LOAD_FLAGS,
    {
      name: 'shard',
      type: 'string',
      value: 'I/N',
      help: 'run shard I (0-based) of N of every level',
      default: '$JOB_COMPLETION_INDEX/$JOB_COMPLETIONS when set',
    },
    {
      name: 'start-at',
      type: 'string',
      value: 'TIME',
      help: 'wall-clock start of the first level: ISO time or epoch seconds',
    },
    {
      name: 'level-span',
      type: 'string',
      value: 'SECONDS',
      help: 'with --start-at: level k starts at start + k × span',
      default: 'derived for timed levels',
    },
  ],
}

/** Flags as config overrides; values are validated by the config loader, which names the flag. */
export function configFlags(flags: ParsedFlags): ConfigFlags {
  const result: ConfigFlags = {}
  const set = <K extends keyof ConfigFlags>(key: K, value: ConfigFlags[K] | undefined): void => {
    if (value !== undefined) result[key] = value
  }
  set('base_url', stringFlag(flags, 'base-url'))
  set('endpoint', stringFlag(flags, 'endpoint'))
  set('model', stringFlag(flags, 'model'))
  set('api_key_env', stringFlag(flags, 'api-key-env'))
  const levels = stringFlag(flags, 'levels')
  set('levels', levels === undefined ? undefined : numberList(levels))
  set('requests', numberFlag(flags, 'requests'))
  set('duration', numberFlag(flags, 'duration'))
  set('warmup', numberFlag(flags, 'warmup'))
  set('input_tokens', lengthFlag(flags, 'input-tokens'))
  set('output_tokens', lengthFlag(flags, 'output-tokens'))
  set('mode', stringFlag(flags, 'mode'))
  const rates = stringFlag(flags, 'rates')
  set('rates', rates === undefined ? undefined : numberList(rates))
  set('arrival', stringFlag(flags, 'arrival'))
  set('burstiness', numberFlag(flags, 'burstiness'))
  set('max_in_flight', numberFlag(flags, 'max-in-flight'))
  set('warmup_seconds', numberFlag(flags, 'warmup-seconds'))
  set('cooldown_seconds', numberFlag(flags, 'cooldown-seconds'))
  set('profile', stringFlag(flags, 'profile'))
  set('dataset', stringFlag(flags, 'dataset'))
  set('tokenizer', stringFlag(flags, 'tokenizer'))
  set('shared_prefix', numberFlag(flags, 'shared-prefix'))
  if (flags['ignore-eos'] === true) result.ignore_eos = true
  if (flags['no-calibrate'] === true) result.calibrate = false
  set('seed', numberFlag(flags, 'seed'))
  set('max_cost', numberFlag(flags, 'max-cost'))
  set('timeout', numberFlag(flags, 'timeout'))
  set('retry', numberFlag(flags, 'retry'))
  set('connect_timeout', numberFlag(flags, 'connect-timeout'))
  set('first_token_timeout', numberFlag(flags, 'first-token-timeout'))
  set('idle_timeout', numberFlag(flags, 'idle-timeout'))
  set('out', stringFlag(flags, 'out'))
  const workers = stringFlag(flags, 'workers')
  set('workers', workers === undefined || workers === 'auto' ? workers : numberFlag(flags, 'workers'))
  const slo = stringFlag(flags, 'slo')
  set('slo', slo === undefined ? undefined : sloPairs(slo))
  if (flags['fail-on-slo'] === true) result.fail_on_slo = true
  set('min_success_rate', numberFlag(flags, 'min-success-rate'))
  if (flags.refine === true) result.refine = true
  set('history', stringFlag(flags, 'history'))
  if (flags['no-preflight'] === true) result.preflight = false
  if (flags['no-keepalive'] === true) result.keepalive = false
  if (flags['no-stream'] === true) result.stream = false
  return result
}

/** A length flag: a plain number stays a number (so "-5" is reported as a bad count), else the text. */
function lengthFlag(flags: ParsedFlags, name: string): number | string | undefined {
  const value = stringFlag(flags, name)
  if (value === undefined) return undefined
  return /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value
}

/** "ttft_p95_ms=800,e2e_p99_ms=5000" → { ttft_p95_ms: 800, ... }; a bad pair stays NaN so validation names it. */
function sloPairs(text: string): Record<string, number> {
  const pairs: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const [key = '', value = ''] = pair.split('=')
    pairs[key.trim()] = value.trim() === '' ? Number.NaN : Number(value)
  }
  return pairs
}

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(RUN_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(RUN_SPEC))
    return EXIT.ok
  }
  const configFiles = (flags.config as string[] | undefined) ?? []
  const config = loadConfigOrThrow(configFiles, configFlags(flags))
  return executeRun(config, flags, io)
}

export function loadConfigOrThrow(configFiles: string[], flags: ConfigFlags): RunConfig {
  try {
    return loadRunConfig({ configFiles, flags })
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, EXIT.usage)
    throw error
  }
}

/** Runs a loaded config: plan line, Ctrl-C handling, the gradient, the table, the exit code. */
export async function executeRun(
  config: RunConfig,
  flags: ParsedFlags,
  io: Io,
  options: { apiKey?: string | null } = {},
): Promise<number> {
  const quiet = flags.quiet === true
  const log = (line: string): void => {
    if (!quiet) io.err(`${line}\n`)
  }
  if (config.run.fail_on_slo && Object.keys(config.metrics.slo).length === 0) {
    throw new CliError('--fail-on-slo needs objectives: set --slo (or [slo] in config.toml)', EXIT.usage)
  }
  const endpoint =
    options.apiKey !== undefined
      ? resolveEndpoint(config, options.apiKey)
      : endpointFromEnv(config, process.env, log)
  if (endpoint.secrets.length === 0 && options.apiKey === undefined) {
    log(`note: $${config.target.api_key_env} is not set: sending no Authorization header`)
  }
  const shardSlot = resolveShard(flags, process.env)
  const schedule = resolveSchedule(flags, config)
  const outDir =
    config.run.out_dir ??
    freeFolderName(
      `${defaultOutDir(config.target.model)}${shardSlot === null ? '' : `-shard-${shardSlot.index}-of-${shardSlot.count}`}`,
    )
  const replaced = readyOutDir(outDir, config, flags.force === true)
  log(describePlan(config, outDir))
  const underDriven = underDrivenWarning(config.load)
  if (underDriven !== null) log(underDriven)
  const fdLimit = fdLimitWarning(config.load)
  if (fdLimit !== null) log(fdLimit)
  if (replaced !== null) log(`note: ${replaced}`)
  for (const note of ignoredFlags(config, flags)) log(`note: ${note}`)
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
    let shard: ShardInfo | undefined
    if (shardSlot !== null) {
      shard = {
        ...shardSlot,
        host: hostname(),
        start_at: schedule === undefined ? null : new Date(schedule.start_at_ms).toISOString(),
        clock_offset_ms: await estimateClockOffsetMs(endpoint, stop.setupInterrupt),
        config_digest: configDigest(config),
      }
      log(
        `shard ${shard.index}/${shard.count} on ${shard.host}` +
          (shard.clock_offset_ms === null ? '' : `, clock offset vs server ≈ ${shard.clock_offset_ms} ms`),
      )
      if (stop.requested) {
        io.err('interrupted during the set-up: no request of the run was sent\n')
        return EXIT.interrupted
      }
    }
    // A live line only on a terminal; CI logs get the plain per-level lines.
    const live = !quiet && process.stderr.isTTY === true
    const progress = live ? (p: LevelProgress) => io.err(`\r\x1b[K${formatProgress(p)}`) : undefined
    const logLine = live ? (line: string) => log(`\r\x1b[K${line}`) : log
    let outcome: Awaited<ReturnType<typeof runGradient>>
    try {
      outcome = await runGradient({
        config,
        endpoint,
        outDir,
        log: logLine,
        stop,
        ...(progress ? { progress } : {}),
        ...(shard ? { shard } : {}),
        ...(schedule ? { schedule } : {}),
      })
    } catch (error) {
      if (error instanceof WorkloadError) throw new CliError(error.message, EXIT.usage)
      if (error instanceof DiskFullError) throw new CliError(error.message, EXIT.diskFull)
      throw error
    }
    if (outcome.kind === 'preflight-failed') {
      io.err(`${outcome.preflight.summary}\n  (skip this check with --no-preflight)\n`)
      return EXIT.preflight
    }
    if (outcome.kind === 'interrupted-before-load') {
      io.err(
        `interrupted during the ${outcome.phase}: no level was run; the requests sent are in ${outcome.recordsPath}\n`,
      )
      return EXIT.interrupted
    }
    if (outcome.kind === 'over-budget') {
      io.err(`llmbench: not started: ${outcome.reason}\n`)
      return EXIT.usage
    }
    const { result } = outcome
    if (flags.json === true) io.out(`${JSON.stringify(result, null, 2)}\n`)
    else io.out(`${renderTable(result)}\n${renderVerdict(result)}\nResults: ${outcome.resultPath}\n`)
    if (config.run.history_dir !== null)
      log(`history: appended to ${appendHistory(config.run.history_dir, result)}`)
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
    return EXIT.ok
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
  }
}

/** What the first interrupt does, said at once, in each phase of the run. */
const INTERRUPT_ANSWERS: Record<RunPhase, string> = {
  'set-up': 'interrupt: stopping before the load; nothing more is sent',
  load: 'interrupt: no new requests; waiting for in-flight ones (Ctrl-C again to quit now)',
  report:
    'interrupt: every level is measured and the result is written; finishing the report (Ctrl-C again to skip it)',
}

/** Signals that stop a run: no new requests, in-flight ones drain, the partial result is written. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** One result folder, one run: refuses a folder holding a run unless --force (before anything is sent). */
function readyOutDir(outDir: string, config: RunConfig, force: boolean): string | null {
  try {
    return prepareResultFolder(outDir, config.metrics.output_json, force)
  } catch (error) {
    if (error instanceof FolderInUseError || error instanceof FolderUnwritableError)
      throw new CliError(error.message, EXIT.usage)
    throw error
  }
}

function describePlan(config: RunConfig, outDir: string): string {
  const { load, workload } = config
  const window =
    load.warmup_s > 0 || load.cooldown_s > 0
      ? ` (+${load.warmup_s} s warm-up, +${load.cooldown_s} s cool-down)`
      : ''
  const bound =
    load.duration_per_level_s !== null
      ? `${load.duration_per_level_s} s${window}`
      : `${load.requests_per_level} requests`
  const levels =
    load.mode === 'request_rate'
      ? `rates ${load.rates.join(',')}/s (${load.arrival}${load.arrival === 'gamma' ? ` k=${load.burstiness}` : ''})`
      : `levels ${load.levels.join(',')}`
  const input = workload.dataset === null ? formatLength(workload.input) : `dataset ${workload.dataset}`
  return (
    `llmbench: ${config.target.model} at ${displayUrl(joinUrl(config.target.base_url, config.target.endpoint))}: ` +
    `${levels}, ${bound} per level (+${load.warmup_requests} warm-up), ` +
    `input ${input} / output ${formatLength(workload.output)} tokens${workload.profile === null ? '' : ` (profile ${workload.profile})`}, ` +
    `${config.client.stream ? 'streaming' : 'not streaming'} -> ${outDir}`
  )
}

/** Flags that the chosen mode does not use: said, so a typo'd mode does not go unnoticed. */
function ignoredFlags(config: RunConfig, flags: ParsedFlags): string[] {
  const rateOnly = ['rates', 'arrival', 'burstiness', 'max-in-flight'].filter(
    (name) => flags[name] !== undefined,
  )
  if (config.load.mode === 'concurrency' && rateOnly.length > 0)
    return [`${rateOnly.map((name) => `--${name}`).join(', ')} only apply with --mode rate`]
  if (config.load.mode === 'request_rate' && flags.levels !== undefined)
    return ['--levels does not apply in request-rate mode: the levels are --rates']
  return []
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

/** --start-at (and --level-span): when each level starts on the wall clock; undefined = now, back to back. */
function resolveSchedule(flags: ParsedFlags, config: RunConfig): StartSchedule | undefined {
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
  return { start_at_ms: startAt, level_span_s: spanFlag ?? derivedLevelSpan(config) }
}

/**
 * Timed levels have a known length: warm-up allowance + windows + the drain of the last requests.
 * Counted levels do not, so only their first level is scheduled unless --level-span says.
 */
function derivedLevelSpan(config: RunConfig): number | null {
  const { load, client } = config
  if (load.duration_per_level_s === null) return null
  const warmupAllowance = load.warmup_requests > 0 ? 10 : 0
  const drain = Math.min(client.timeout_s, 30)
  return warmupAllowance + timedLevelSeconds(load) + drain
}

/** results/<UTC time>-<model>, with characters unsafe in a file name replaced. */
export function defaultOutDir(model: string, now = new Date()): string {
  return join('results', `${utcStamp(now)}-${model.replace(/[^A-Za-z0-9._-]+/g, '_')}`)
}

/** 20261202T230455Z: the UTC time to the second, safe in file and resource names. */
export function utcStamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
}
