import { join } from 'node:path'
import { displayUrl } from '../../client/redact.js'
import { ConfigError } from '../../config/errors.js'
import { DEFAULTS, loadRunConfig } from '../../config/load.js'
import type { ConfigFlags, RunConfig } from '../../config/types.js'
import { joinUrl } from '../../config/url.js'
import { appendHistory } from '../../report/history.js'
import { formatProgress, type LevelProgress } from '../../report/progress.js'
import { renderTable, renderVerdict } from '../../report/terminal.js'
import { runGradient } from '../../run/run-gradient.js'
import { StopSignal } from '../../run/stop-signal.js'
import { readApiKey } from '../../run/target.js'
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
    name: 'levels',
    type: 'string',
    value: '1,4,8',
    help: 'concurrency levels',
    default: DEFAULTS.load.levels.join(','),
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
    help: 'prompt length (tokens)',
    default: String(DEFAULTS.workload.input_tokens),
  },
  {
    name: 'output-tokens',
    type: 'string',
    value: 'N',
    help: 'max_tokens per request',
    default: String(DEFAULTS.workload.output_tokens),
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
  {
    name: 'slo',
    type: 'string',
    value: 'KEY=MS,...',
    help: 'objectives, e.g. ttft_p95_ms=800,tpot_p95_ms=50 (metrics ttft, tpot, e2e)',
  },
  { name: 'fail-on-slo', type: 'boolean', help: 'exit 1 when no level meets every SLO' },
  { name: 'refine', type: 'boolean', help: 'bisect around the knee with up to 3 extra levels' },
  { name: 'history', type: 'string', value: 'DIR', help: "append this run's summary to DIR/history.jsonl" },
  { name: 'no-preflight', type: 'boolean', help: 'skip the one-request check before the first level' },
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
  set('input_tokens', numberFlag(flags, 'input-tokens'))
  set('output_tokens', numberFlag(flags, 'output-tokens'))
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
  if (flags.refine === true) result.refine = true
  set('history', stringFlag(flags, 'history'))
  if (flags['no-preflight'] === true) result.preflight = false
  if (flags['no-stream'] === true) result.stream = false
  return result
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
  const apiKey = options.apiKey !== undefined ? options.apiKey : readApiKey(config)
  if (apiKey === null && options.apiKey === undefined) {
    log(`note: $${config.target.api_key_env} is not set: sending no Authorization header`)
  }
  const outDir = config.run.out_dir ?? defaultOutDir(config.target.model)
  log(describePlan(config, outDir))
  const stop = new StopSignal()
  const onSignal = (): void => {
    if (stop.requested) {
      stop.flushAll()
      io.err('second interrupt: exiting now; finished records are in requests.jsonl\n')
      process.exit(EXIT.interrupted)
    }
    stop.request()
    io.err('interrupt: no new requests; waiting for in-flight ones (Ctrl-C again to quit now)\n')
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    // A live line only on a terminal; CI logs get the plain per-level lines.
    const live = !quiet && process.stderr.isTTY === true
    const progress = live ? (p: LevelProgress) => io.err(`\r\x1b[K${formatProgress(p)}`) : undefined
    const logLine = live ? (line: string) => log(`\r\x1b[K${line}`) : log
    const outcome = await runGradient({
      config,
      apiKey,
      outDir,
      log: logLine,
      stop,
      ...(progress ? { progress } : {}),
    })
    if (outcome.kind === 'preflight-failed') {
      io.err(`${outcome.preflight.summary}\n  (skip this check with --no-preflight)\n`)
      return EXIT.preflight
    }
    const { result } = outcome
    if (flags.json === true) io.out(`${JSON.stringify(result, null, 2)}\n`)
    else io.out(`${renderTable(result)}\n${renderVerdict(result)}\nResults: ${outcome.resultPath}\n`)
    if (config.run.history_dir !== null)
      log(`history: appended to ${appendHistory(config.run.history_dir, result)}`)
    if (stop.requested) return EXIT.interrupted
    if (config.run.fail_on_slo && result.capacity === null) {
      io.err(`SLO gate failed: ${result.capacity_summary}\n`)
      return EXIT.gateFailed
    }
    return EXIT.ok
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

function describePlan(config: RunConfig, outDir: string): string {
  const bound =
    config.load.duration_per_level_s !== null
      ? `${config.load.duration_per_level_s} s`
      : `${config.load.requests_per_level} requests`
  return (
    `llmbench: ${config.target.model} at ${displayUrl(joinUrl(config.target.base_url, config.target.endpoint))}: ` +
    `levels ${config.load.levels.join(',')}, ${bound} per level (+${config.load.warmup_requests} warm-up), ` +
    `input ${config.workload.input_tokens} / output ${config.workload.output_tokens} tokens, ` +
    `${config.client.stream ? 'streaming' : 'not streaming'} -> ${outDir}`
  )
}

/** results/<UTC time>-<model>, with characters unsafe in a file name replaced. */
export function defaultOutDir(model: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return join('results', `${stamp}-${model.replace(/[^A-Za-z0-9._-]+/g, '_')}`)
}
