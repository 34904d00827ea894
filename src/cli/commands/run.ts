import { DEFAULTS } from '../../config/load.js'
import type { ConfigFlags } from '../../config/types.js'
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
import { executeRun } from '../execute-run.js'
import { EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { loadConfigOrThrow } from '../load-config.js'

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
