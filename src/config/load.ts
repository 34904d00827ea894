/**
 * Loads settings.json / config.toml files and CLI flags into one RunConfig.
 *
 * Every source becomes a "layer": a partial RunConfig (a patch) plus the issues found in it. All
 * sources are read and checked before anything is reported, so one ConfigError lists every problem.
 */
import { extname } from 'node:path'
import { parse as parseToml, TomlError } from 'smol-toml'
import { describeValue } from '../describe-value.js'
import { type Capability, eitherOf, theProtocolsCarrying } from '../protocols/capabilities.js'
import { PROTOCOLS, protocolOfEndpoint } from '../protocols/names.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import { RESULT_FILE } from '../result/folder-layout.js'
import { valueAt } from '../schema-issue.js'
import { NotRegularFileError, NotTextError, readTextFile } from '../text-file.js'
import { type LengthSpec, meanLength } from '../workload/lengths.js'
import { PROFILE_NAMES, PROFILES } from '../workload/profiles.js'
import type { z } from '../zod.js'
import { ConfigError, type ConfigIssue } from './errors.js'
import { foreignPatch, foreignShape } from './foreign-configs.js'
import { parseJsonc } from './jsonc.js'
import { validate } from './schema.js'
import { type FileLayer, keyIn, settingConflicts } from './setting-conflicts.js'
import { type ConfigFlags, SETTINGS, type SettingId } from './settings.js'
import {
  ConfigTomlSchema,
  FlagsSchema,
  type Patch,
  patchOf,
  rawKeysOf,
  SettingsJsonSchema,
  type Source,
  whereToSet,
} from './source-schemas.js'
import type { RunConfig } from './types.js'
import { flagOf, type WhereSet, whereSetIn } from './where-set.js'

/**
 * What a run uses when no layer says otherwise (printed by `--help`). base_url and model are empty on
 * purpose: no guess is right for a real run, so the final check asks the user for them. Frozen, because
 * it is shared; loadRunConfig works on a copy.
 */
export const DEFAULTS: RunConfig = deepFreeze({
  target: {
    base_url: '',
    endpoint: '/v1/chat/completions',
    protocol: 'chat',
    model: '',
    more_base_urls: [],
    endpoint_weights: [],
    more_models: [],
    model_weights: [],
    api_key_env: 'OPENAI_API_KEY',
    api_key_file: null,
    auth: 'auto',
    headers: {},
    env_headers: {},
  },
  client: {
    stream: true,
    timeout_s: 120,
    connect_timeout_s: 10,
    first_token_timeout_s: null,
    idle_timeout_s: 60,
    retry: 0,
    keepalive: true,
    proxy: true,
  },
  load: {
    mode: 'concurrency',
    levels: [1, 4, 8, 16, 32, 64],
    rates: [1, 2, 4, 8, 16],
    arrival: 'poisson',
    burstiness: 1,
    max_in_flight: 1024,
    stagger: true,
    cancel_share: 0,
    cancel_after: 'first',
    ramp_s: null,
    requests_per_level: 40,
    duration_per_level_s: null,
    precision: null,
    max_requests_per_level: null,
    max_duration_per_level_s: null,
    warmup_requests: 5,
    warmup_s: 0,
    cooldown_s: 0,
    control: true,
    repeat: 1,
  },
  workload: {
    input: { kind: 'fixed', value: 256 },
    output: { kind: 'fixed', value: 512 },
    input_tokens: 256,
    output_tokens: 512,
    dataset: null,
    profile: null,
    tokenizer: 'o200k',
    shared_prefix: 0,
    images: null,
    audio: null,
    response_schema: null,
    tools: null,
    tool_choice: 'auto',
    sessions: false,
    turns: 4,
    think_time_s: 0,
    jobs: false,
    fan_out: 1,
    tool_wait_s: 0,
    ignore_eos: false,
    calibrate: true,
    seed: 1,
    trace: null,
    trace_speeds: [1],
    trace_start_s: 0,
    trace_duration_s: null,
    trace_max_requests: null,
  },
  pricing: null,
  metrics: {
    percentiles: [50, 95, 99],
    record_ttft: true,
    record_tpot: true,
    record_throughput: true,
    output_json: RESULT_FILE,
    slo: {},
    min_success_rate: 90,
  },
  server_metrics: { enabled: true, urls: ['auto'], interval_s: 1 },
  run: {
    out_dir: null,
    preflight: true,
    workers: 'auto',
    fail_on_slo: false,
    refine: false,
    paired: false,
    paired_mode: 'interleave',
    gate: false,
    gate_max_regression: null,
    gate_min_change: null,
    search: false,
    search_tolerance: null,
    reset_cache: 'off',
    history_dir: null,
    max_cost: null,
    export_parquet: false,
    charts: true,
    metrics_port: null,
    metrics_host: '127.0.0.1',
  },
})

export interface LoadOptions {
  /** settings.json and/or config.toml paths, as given with -c (the extension picks the format). */
  configFiles: string[]
  flags: ConfigFlags
}

/** Builds the RunConfig from defaults, files and flags; throws one ConfigError listing every problem found. */
export function loadRunConfig(opts: LoadOptions): RunConfig {
  const flags = flagsLayer(opts.flags)
  const layers = [...opts.configFiles.map(loadFile), flags]
  const issues = layers.flatMap((layer) => layer.issues)

  // docs/configuration.md "Files and how they layer" ranks the sources (defaults < settings.json <
  // config.toml < flags) rather than leaving it to the order of -c options: every settings.json first,
  // then every config.toml, each kind in the order given. Array.prototype.sort is stable, which keeps
  // that order within one kind.
  const ranked = [...layers].sort((a, b) => a.rank - b.rank)
  // A profile (preset or file) supplies workload defaults below every file and flag.
  const profile = profileLayer(ranked.findLast((layer) => layer.patch?.workload?.profile !== undefined))
  if (profile !== null) {
    issues.push(...profile.issues)
    ranked.unshift(profile)
  }
  let config: RunConfig = structuredClone(DEFAULTS)
  for (const layer of ranked) if (layer.patch) config = applyPatch(config, layer.patch)
  const conflicts = [
    ...ranked.flatMap((layer) => layer.notes ?? []),
    ...settingConflicts(
      ranked.flatMap((layer) => (layer.file === undefined ? [] : [layer as FileLayer])),
      flags.patch,
    ),
  ]
  settleProtocol(config, ranked)
  // A trace is replayed on its own clock: an open loop, whatever the mode says.
  if (config.workload.trace !== null) config.load.mode = 'request_rate'
  config.workload.input_tokens = Math.round(meanLength(config.workload.input, DEFAULTS.workload.input_tokens))
  config.workload.output_tokens = Math.round(
    meanLength(config.workload.output, DEFAULTS.workload.output_tokens),
  )

  issues.push(...finalIssues(config, layers, ranked))
  if (issues.length > 0) throw new ConfigError(issues)
  rampAsOneLevel(config)
  CONFLICTS.set(config, conflicts)
  WHERE_SET.set(config, whereSetIn(ranked))
  const sized = ranked.some((layer) => {
    const load = layer.patch?.load
    return (
      load?.requests_per_level !== undefined ||
      load?.duration_per_level_s !== undefined ||
      load?.precision !== undefined
    )
  })
  if (!sized) SIZED_BY_DEFAULT.add(config)
  return config
}

/** Configs whose levels no source sized (no requests, duration or precision anywhere). */
const SIZED_BY_DEFAULT = new WeakSet<RunConfig>()

/** Whether no file or flag said how long a level is: the run may then size levels by precision. */
export function levelsSizedByDefault(config: RunConfig): boolean {
  return SIZED_BY_DEFAULT.has(config)
}

const WHERE_SET = new WeakMap<RunConfig, WhereSet>()

/** Where `config`'s settings were given, for hints (where-set.ts); a config not loaded here names the flags. */
export function configWhereSet(config: RunConfig): WhereSet {
  return WHERE_SET.get(config) ?? flagOf
}

const CONFLICTS = new WeakMap<RunConfig, string[]>()

/** What the files that built `config` disagreed on, and which won (setting-conflicts.ts); [] = nothing. */
export function configConflicts(config: RunConfig): string[] {
  return CONFLICTS.get(config) ?? []
}

/**
 * The protocol and the endpoint agree: a protocol given alone brings its endpoint, an endpoint given
 * alone names its protocol, and both given are taken as written (a gateway may serve any path).
 */
function settleProtocol(config: RunConfig, layers: readonly Layer[]): void {
  const sets = (key: 'protocol' | 'endpoint') =>
    layers.some((layer) => layer.patch?.target?.[key] !== undefined)
  if (sets('protocol') && !sets('endpoint')) config.target.endpoint = protocolOf(config.target.protocol).path
  else if (!sets('protocol')) config.target.protocol = protocolOfEndpoint(config.target.endpoint)
}

// ---------------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------------

type Prices = NonNullable<RunConfig['pricing']>
const NO_PRICES: Prices = { input_per_mtok: 0, output_per_mtok: 0, currency: 'USD' }

interface Layer {
  /** Position in the precedence of docs/configuration.md: higher overrides lower. */
  rank: number
  /** What the source sets; null when it has issues (a half-valid file is not applied). */
  patch: Patch | null
  issues: ConfigIssue[]
  /** The parsed document, or UNPARSED when the file could not be read or parsed at all. */
  raw: unknown
  /** What the source asks for that is not done (foreign-configs.ts), said beside the conflicts. */
  notes?: string[]
  /** A valid settings.json or config.toml: its name and kind (for the notes on settings they disagree on). */
  file?: string
  source?: 'json' | 'toml'
}

const RANK = { profile: 0, unknown: 0, json: 1, toml: 2, flags: 3 } as const
const UNPARSED = Symbol('unparsed')

type Result<T> = { ok: true; value: T } | { ok: false; issue: ConfigIssue }

function loadFile(file: string): Layer {
  const ext = extname(file).toLowerCase()
  if (ext !== '.json' && ext !== '.toml') {
    const message = `expected a .json (settings) or .toml (config) file, got ${JSON.stringify(ext || file)}`
    return { rank: RANK.unknown, patch: null, issues: [{ file, path: '', message }], raw: UNPARSED }
  }
  const rank = ext === '.json' ? RANK.json : RANK.toml
  const text = readText(file)
  const parsed = !text.ok
    ? text
    : ext === '.json'
      ? parseJson(file, text.value)
      : parseTomlText(file, text.value)
  if (!parsed.ok) return { rank, patch: null, issues: [parsed.issue], raw: UNPARSED }
  const foreign = foreignShape(ext === '.json' ? 'json' : 'toml', parsed.value)
  if (foreign !== null) {
    // Its keys are not llmbench's: a failed one could have set anything the final checks look at.
    const layer = foreignPatch(foreign, file, parsed.value)
    return { rank, ...layer, raw: layer.patch === null ? UNPARSED : parsed.value }
  }
  return ext === '.json'
    ? schemaLayer(rank, file, parsed.value, 'json', SETTINGS_SIZING)
    : schemaLayer(rank, file, parsed.value, 'toml', TOML_SIZING)
}

/**
 * The layer of the profile the highest-ranked source names: a preset's lengths, or a profile file
 * (any settings.json/config.toml, typically just [workload]) read like a config file.
 */
function profileLayer(naming: Layer | undefined): Layer | null {
  const name = naming?.patch?.workload?.profile
  if (naming === undefined || name === undefined || name === null) return null
  const preset = PROFILES[name]
  if (preset !== undefined) {
    return {
      rank: RANK.profile,
      patch: { workload: { input: preset.input, output: preset.output } },
      issues: [],
      raw: {},
    }
  }
  if (!/\.(toml|json)$/i.test(name)) {
    const file = naming.rank === RANK.flags ? 'flags' : 'config'
    const path = naming.rank === RANK.flags ? '--profile' : 'profile'
    const message = `expected ${PROFILE_NAMES.map((n) => `"${n}"`).join(', ')} or a path to a profile file (.toml or .json), got ${JSON.stringify(name)}`
    return { rank: RANK.profile, patch: null, issues: [{ file, path, message }], raw: UNPARSED }
  }
  const layer = loadFile(name)
  return { ...layer, rank: RANK.profile }
}

function flagsLayer(flags: ConfigFlags): Layer {
  return schemaLayer(RANK.flags, 'flags', flags, 'flags', FLAG_SIZING)
}

const SCHEMAS: Record<Source, z.ZodType> = {
  json: SettingsJsonSchema,
  toml: ConfigTomlSchema,
  flags: FlagsSchema,
}

function schemaLayer(rank: number, file: string, raw: unknown, source: Source, sizing: Sizing): Layer {
  const result = validate(SCHEMAS[source], raw, file, source === 'flags' ? 'flags' : 'keys')
  const issues = [...(result.ok ? [] : result.issues), ...bothSizesIssues(file, raw, sizing)]
  const patch = result.ok && issues.length === 0 ? patchOf(source, result.value) : null
  return source === 'flags' || patch === null
    ? { rank, patch, issues, raw }
    : { rank, patch, issues, raw, file, source }
}

/**
 * Where one source sizes a level by count and by time. The two are exclusive ways to end a level; one
 * source giving both is ambiguous, so it is an issue rather than a silent pick.
 */
interface Sizing {
  path: string
  requests: { name: string; at: string[] }
  duration: { name: string; at: string[] }
}

const SETTINGS_SIZING: Sizing = {
  path: 'bench',
  requests: { name: 'requests_per_level', at: ['bench', 'requests_per_level'] },
  duration: { name: 'duration_per_level', at: ['bench', 'duration_per_level'] },
}
const TOML_SIZING: Sizing = {
  path: 'load',
  requests: { name: 'requests_per_level', at: ['load', 'requests_per_level'] },
  duration: { name: 'duration_per_level', at: ['load', 'duration_per_level'] },
}
const FLAG_SIZING: Sizing = {
  path: '--requests',
  requests: { name: '--requests', at: ['requests'] },
  duration: { name: '--duration', at: ['duration'] },
}

function bothSizesIssues(file: string, raw: unknown, { path, requests, duration }: Sizing): ConfigIssue[] {
  const count = valueAt(raw, requests.at)
  const time = valueAt(raw, duration.at)
  if (count === undefined || time === undefined) return []
  const found = `${requests.name} = ${describeValue(count)} and ${duration.name} = ${describeValue(time)}`
  return [
    { file, path, message: `expected either ${requests.name} or ${duration.name}, not both; got ${found}` },
  ]
}

// ---------------------------------------------------------------------------------------------------
// Layering
// ---------------------------------------------------------------------------------------------------

function applyPatch(base: RunConfig, patch: Patch): RunConfig {
  const next: RunConfig = {
    target: overlay(base.target, patch.target),
    client: overlay(base.client, patch.client),
    load: overlay(base.load, patch.load),
    workload: overlay(base.workload, patch.workload),
    metrics: overlay(base.metrics, patch.metrics),
    server_metrics: overlay(base.server_metrics, patch.server_metrics),
    run: overlay(base.run, patch.run),
    pricing: patch.pricing === undefined ? base.pricing : overlay(base.pricing ?? NO_PRICES, patch.pricing),
  }
  // A level ends after N requests or after T seconds. A later source choosing one replaces an earlier
  // source's choice of the other, instead of leaving both set (RunConfig: exactly one is non-null).
  if (patch.load?.requests_per_level != null) next.load.duration_per_level_s = null
  if (patch.load?.duration_per_level_s != null) next.load.requests_per_level = null
  // Precision sizes levels by requests (requests_per_level is its floor): a later source asking for
  // it replaces an earlier source's timed levels (the demo's), unless it sets a duration itself.
  if (
    patch.load?.precision != null &&
    patch.load.duration_per_level_s == null &&
    next.load.duration_per_level_s !== null
  ) {
    next.load.duration_per_level_s = null
    next.load.requests_per_level ??= DEFAULTS.load.requests_per_level
  }
  mergeHeaderTables(next.target, base.target, patch.target)
  return next
}

/**
 * Header tables add up across sources (a file's gateway headers plus one --header) instead of the
 * later table replacing the earlier, a later source's value winning per name. A source naming its
 * own key variable drops a key file an earlier source pointed at.
 */
function mergeHeaderTables(
  next: RunConfig['target'],
  base: RunConfig['target'],
  patch: Partial<RunConfig['target']> | undefined,
): void {
  if (patch?.headers !== undefined) next.headers = { ...base.headers, ...patch.headers }
  if (patch?.env_headers !== undefined) next.env_headers = { ...base.env_headers, ...patch.env_headers }
  if (patch?.api_key_env !== undefined && patch.api_key_file === undefined) next.api_key_file = null
}

/** `base` with every key that `patch` defines replaced; undefined means "not set here", not "unset". */
function overlay<T extends object>(base: T, patch: Partial<T> | undefined): T {
  const out = { ...base }
  if (!patch) return out
  for (const key of Object.keys(patch) as (keyof T)[]) {
    const value = patch[key]
    if (value !== undefined) out[key] = value as T[keyof T]
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// Checks on the merged result
// ---------------------------------------------------------------------------------------------------

interface FinalCheck {
  path: string
  fails: (config: RunConfig) => boolean
  message: string
  /** Raw keys (files or flags) that could have supplied the value. */
  sources: string[][]
  /** The settings at odds: the issue names where each was set (a file's key, a flag), not "defaults". */
  settings?: SettingId[]
}

/** Whether the run's protocol carries `capability` (capabilities.ts). */
function carries(config: RunConfig, capability: Capability): boolean {
  return protocolOf(config.target.protocol).carries[capability]
}

/** The protocols a session can hold a conversation with: those whose replies it carries into the next turn. */
const GENERATING = PROTOCOLS.filter((protocol) => protocolOf(protocol).generatesTokens)

/** "response_schema and tools with the chat protocol", or each with its own protocols once they differ. */
function schemaAndToolsWhere(): string {
  const schema = theProtocolsCarrying('structuredOutput')
  const tools = theProtocolsCarrying('tools')
  return schema === tools
    ? `response_schema and tools with ${tools}`
    : `response_schema with ${schema} and tools with ${tools}`
}

const DATASET_LENGTH_SOURCES = [...rawKeysOf('input_tokens'), ...rawKeysOf('output_tokens')]

/** What a job run cannot be combined with, beside what it shares with sessions. */
function jobConflicts(c: RunConfig): SettingId[] {
  const conflicts: SettingId[] = []
  if (c.workload.sessions) conflicts.push('sessions')
  if (c.workload.trace !== null) conflicts.push('trace')
  if (c.load.precision !== null) conflicts.push('precision')
  if (c.load.repeat > 1) conflicts.push('repeat')
  if (c.target.more_base_urls.length + c.target.more_models.length > 0) conflicts.push('more_base_urls')
  if (c.workload.images !== null) conflicts.push('images')
  if (c.workload.audio !== null) conflicts.push('audio')
  if (c.workload.response_schema !== null) conflicts.push('response_schema')
  return conflicts
}

/**
 * Jobs run like sessions (a closed loop of conversations on one server, built from the replies), so
 * they refuse what sessions refuse, and sessions themselves: a stream runs one or the other.
 */
const JOB_CHECKS: FinalCheck[] = [
  {
    path: 'jobs',
    fails: (c) => c.workload.jobs && jobConflicts(c).length > 0,
    message:
      'expected jobs without sessions, a trace, precision, repeat, several endpoints or models, images, audio or a response schema: a job runs its own conversations, turn by turn, on one server',
    sources: [
      ...rawKeysOf('jobs'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('trace'),
      ...rawKeysOf('precision'),
      ...rawKeysOf('repeat'),
      ...rawKeysOf('more_base_urls'),
      ...rawKeysOf('more_models'),
      ...rawKeysOf('images'),
      ...rawKeysOf('audio'),
      ...rawKeysOf('response_schema'),
    ],
  },
  {
    path: 'jobs',
    fails: (c) => c.workload.jobs && !protocolOf(c.target.protocol).generatesTokens,
    message: `expected a protocol that generates replies with jobs (${GENERATING.join(', ')}), got ${eitherOf(PROTOCOLS.filter((p) => !GENERATING.includes(p)))}: a job carries the replies into its next turns`,
    sources: [...rawKeysOf('jobs'), ...rawKeysOf('protocol'), ...rawKeysOf('endpoint')],
  },
  {
    path: 'jobs',
    fails: (c) => c.workload.jobs && c.load.mode !== 'concurrency',
    message:
      'expected mode "concurrency" with jobs: a job\'s turns wait for each other, so only a closed loop can run them (its concurrency counts jobs in flight)',
    sources: [...rawKeysOf('jobs'), ...rawKeysOf('mode')],
    settings: ['jobs', 'mode'],
  },
  {
    path: 'slo',
    fails: (c) => !c.workload.jobs && Object.keys(c.metrics.slo).some((key) => key.startsWith('jct_')),
    message:
      'expected jobs with an SLO on jct (job completion time): without --jobs there is no job to time, and the objective could never be met',
    sources: [...rawKeysOf('slo'), ...rawKeysOf('jobs')],
    settings: ['slo', 'jobs'],
  },
]

const FINAL_CHECKS: FinalCheck[] = [
  {
    path: 'base_url',
    fails: (c) => c.target.base_url === '',
    message: `expected a base URL (${whereToSet('base_url')}), got nothing`,
    sources: rawKeysOf('base_url'),
  },
  {
    path: 'model',
    fails: (c) => c.target.model.trim() === '',
    message: `expected a model id (set ${whereToSet('model')}), got nothing`,
    sources: rawKeysOf('model'),
  },
  {
    path: 'endpoint_weights',
    fails: (c) =>
      c.target.endpoint_weights.length > 0 &&
      c.target.endpoint_weights.length !== 1 + c.target.more_base_urls.length,
    message:
      'expected one weight per endpoint (base_url first, then more_base_urls; --base-url repeated), or none for equal shares',
    sources: [...rawKeysOf('endpoint_weights'), ...rawKeysOf('more_base_urls'), ...rawKeysOf('base_url')],
    settings: ['endpoint_weights', 'more_base_urls'],
  },
  {
    path: 'model_weights',
    fails: (c) =>
      c.target.model_weights.length > 0 && c.target.model_weights.length !== 1 + c.target.more_models.length,
    message:
      'expected one weight per model (model first, then more_models; --model repeated), or none for equal shares',
    sources: [...rawKeysOf('model_weights'), ...rawKeysOf('more_models'), ...rawKeysOf('model')],
    settings: ['model_weights', 'more_models'],
  },
  {
    path: 'more_base_urls',
    fails: (c) =>
      c.target.more_base_urls.length + c.target.more_models.length > 0 &&
      (c.workload.sessions || c.workload.trace !== null || c.run.reset_cache !== 'off'),
    message:
      'expected one endpoint and one model with sessions, a trace or reset_cache: a conversation, a trace row or a cache reset is for one server',
    sources: [
      ...rawKeysOf('more_base_urls'),
      ...rawKeysOf('more_models'),
      ...rawKeysOf('base_url'),
      ...rawKeysOf('model'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('trace'),
      ...rawKeysOf('reset_cache'),
    ],
  },
  // Each layer already rejects these; checked again because the run relies on them absolutely.
  {
    path: 'levels',
    fails: (c) => c.load.levels.length === 0,
    message: `expected at least one concurrency level (${whereToSet('levels')}), got []`,
    sources: rawKeysOf('levels'),
  },
  {
    path: 'requests_per_level',
    fails: (c) => !sizedOnce(c.load),
    message: 'expected exactly one of requests_per_level or duration_per_level to be a positive number',
    sources: [],
  },
  {
    path: 'precision',
    fails: (c) => c.load.precision !== null && c.load.requests_per_level === null,
    message:
      'expected levels sized by requests with precision (requests_per_level is its floor), got duration_per_level: a timed level already ends on the clock',
    sources: [...rawKeysOf('precision'), ...rawKeysOf('duration')],
    settings: ['precision', 'duration'],
  },
  {
    path: 'precision',
    fails: (c) =>
      c.load.precision !== null &&
      (c.load.mode !== 'concurrency' || c.workload.trace !== null || c.workload.sessions),
    message:
      'expected a concurrency gradient with precision (not request_rate mode, a trace or sessions): only a closed loop can stop sending when its figures are precise without changing the load it measures',
    sources: [
      ...rawKeysOf('precision'),
      ...rawKeysOf('mode'),
      ...rawKeysOf('trace'),
      ...rawKeysOf('sessions'),
    ],
    settings: ['precision', 'mode', 'trace', 'sessions'],
  },
  {
    path: 'precision',
    fails: (c) => c.load.precision !== null && c.load.repeat > 1,
    message:
      'expected precision or repeat, not both: each run would stop on its own figures, so the runs of a level would differ in size and their spread would mix precision with noise',
    sources: [...rawKeysOf('precision'), ...rawKeysOf('repeat')],
    settings: ['precision', 'repeat'],
  },
  {
    path: 'max_requests_per_level',
    fails: (c) =>
      c.load.precision === null &&
      (c.load.max_requests_per_level !== null || c.load.max_duration_per_level_s !== null),
    message:
      'expected precision with max_requests_per_level or max_duration_per_level: they are the ceilings of a level that runs until precise (use requests_per_level or duration_per_level to size a level)',
    sources: [...rawKeysOf('max_requests'), ...rawKeysOf('max_duration'), ...rawKeysOf('precision')],
    settings: ['max_requests', 'max_duration'],
  },
  {
    path: 'max_requests_per_level',
    fails: (c) =>
      c.load.max_requests_per_level !== null &&
      c.load.requests_per_level !== null &&
      c.load.max_requests_per_level < c.load.requests_per_level,
    message: 'expected max_requests_per_level at least requests_per_level (the floor)',
    sources: [...rawKeysOf('max_requests'), ...rawKeysOf('requests')],
    settings: ['max_requests', 'requests'],
  },
  {
    path: 'input_tokens',
    fails: (c) =>
      c.workload.dataset === null &&
      (c.workload.input.kind === 'dataset' || c.workload.output.kind === 'dataset'),
    message: `expected a dataset (${whereToSet('dataset')}) for lengths "dataset", got none`,
    sources: [...DATASET_LENGTH_SOURCES, ...rawKeysOf('dataset')],
  },
  {
    path: 'shared_prefix',
    fails: (c) =>
      c.workload.dataset === null &&
      // Sessions send the shared prefix as a system prompt of its own, not as the start of each prompt.
      !c.workload.sessions &&
      !c.workload.jobs &&
      c.workload.shared_prefix > 0 &&
      c.workload.shared_prefix >= shortestInput(c.workload.input),
    message: 'expected a shared prefix shorter than the shortest prompt (input_tokens)',
    sources: [...rawKeysOf('shared_prefix'), ...DATASET_LENGTH_SOURCES],
  },
  {
    path: 'response_schema',
    fails: (c) =>
      (c.workload.response_schema !== null && !carries(c, 'structuredOutput')) ||
      (c.workload.tools !== null && !carries(c, 'tools')) ||
      (c.workload.response_schema !== null && c.workload.sessions) ||
      ((c.workload.response_schema !== null || c.workload.tools !== null) && c.workload.trace !== null),
    // Tools go with sessions and jobs (a reply's calls and their results join the history); a schema
    // does not: a conversation of JSON answers is no workload anyone runs.
    message: `expected ${schemaAndToolsWhere()}, a response schema without sessions, and neither with a trace: the other protocols have no response_format or tools fields, and a trace brings its own requests`,
    sources: [
      ...rawKeysOf('response_schema'),
      ...rawKeysOf('tools'),
      ...rawKeysOf('protocol'),
      ...rawKeysOf('endpoint'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('trace'),
    ],
  },
  {
    path: 'audio',
    fails: (c) =>
      c.workload.audio !== null && (!carries(c, 'audio') || c.workload.sessions || c.workload.trace !== null),
    message: `expected audio with ${theProtocolsCarrying('audio')}, without sessions or a trace: the other protocols have no audio parts, and a session or trace brings its own prompts`,
    sources: [
      ...rawKeysOf('audio'),
      ...rawKeysOf('protocol'),
      ...rawKeysOf('endpoint'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('trace'),
    ],
  },
  {
    path: 'tool_choice',
    fails: (c) => c.workload.tool_choice !== 'auto' && c.workload.tools === null,
    message: 'expected tools with tool_choice: the choice is among the tools sent',
    sources: [...rawKeysOf('tool_choice'), ...rawKeysOf('tools')],
  },
  {
    path: 'images',
    fails: (c) =>
      c.workload.images !== null &&
      (!carries(c, 'images') || c.workload.sessions || c.workload.trace !== null),
    message: `expected images with ${theProtocolsCarrying('images')}, without sessions or a trace: the other protocols have no image parts, and a session or trace brings its own prompts`,
    sources: [
      ...rawKeysOf('images'),
      ...rawKeysOf('protocol'),
      ...rawKeysOf('endpoint'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('trace'),
    ],
  },
  {
    path: 'sessions',
    fails: (c) => c.workload.sessions && !protocolOf(c.target.protocol).generatesTokens,
    message: `expected a protocol that generates replies with sessions (${GENERATING.join(', ')}), got ${eitherOf(PROTOCOLS.filter((p) => !GENERATING.includes(p)))}: a session carries the replies into its next turn`,
    sources: [...rawKeysOf('sessions'), ...rawKeysOf('protocol'), ...rawKeysOf('endpoint')],
  },
  {
    path: 'sessions',
    fails: (c) => c.workload.sessions && c.workload.trace !== null,
    message:
      'expected sessions or a trace, not both: a trace replays its own requests on its own clock, with no conversation between them',
    sources: [...rawKeysOf('sessions'), ...rawKeysOf('trace')],
    settings: ['sessions', 'trace'],
  },
  {
    path: 'sessions',
    fails: (c) => c.workload.sessions && c.workload.trace === null && c.load.mode !== 'concurrency',
    message:
      'expected mode "concurrency" with sessions: a session\'s turns wait for each other, so only a closed loop can run them',
    sources: [...rawKeysOf('sessions'), ...rawKeysOf('mode')],
    settings: ['sessions', 'mode'],
  },
  ...JOB_CHECKS,
  // --repeat interleaves each level's runs; these add levels, turns or replays the interleaving cannot keep apart.
  {
    path: 'repeat',
    fails: (c) => c.load.repeat > 1 && c.run.refine,
    message:
      'expected repeat or refine, not both: --refine places its extra levels from one knee, --repeat finds a knee per run',
    sources: [...rawKeysOf('repeat'), ...rawKeysOf('refine')],
  },
  {
    path: 'repeat',
    fails: (c) => c.load.repeat > 1 && c.workload.sessions,
    message:
      "expected repeat or sessions, not both: a session's turns span the level, and a repeat would replay its conversations under the same ids",
    sources: [...rawKeysOf('repeat'), ...rawKeysOf('sessions')],
  },
  // --gate judges B against A pair by pair: without pairs there is nothing to judge.
  {
    path: 'gate',
    fails: (c) => c.run.gate && !c.run.paired,
    message:
      'expected gate with paired (--gate needs --paired): the gate judges the second target against the first pair by pair',
    sources: [...rawKeysOf('gate'), ...rawKeysOf('paired')],
  },
  // The gate's thresholds say how the gate judges: without the gate nothing reads them.
  {
    path: 'gate_max_regression',
    fails: (c) => (c.run.gate_max_regression !== null || c.run.gate_min_change !== null) && !c.run.gate,
    message:
      'expected max-regression and min-change with gate (--max-regression and --min-change need --paired --gate in a run): they are the thresholds of the paired judgement the run ends with',
    sources: [...rawKeysOf('gate_max_regression'), ...rawKeysOf('gate_min_change'), ...rawKeysOf('gate')],
  },
  // --paired-mode says how a paired run loads its targets: without pairs it says nothing.
  {
    path: 'paired_mode',
    fails: (c) => c.run.paired_mode !== 'interleave' && !c.run.paired,
    message:
      'expected paired_mode with paired (--paired-mode needs --paired): it says how the two targets of a paired run share each level',
    sources: [...rawKeysOf('paired_mode'), ...rawKeysOf('paired')],
  },
  // --paired alternates two targets' blocks inside each level of a fixed size.
  {
    path: 'paired',
    fails: (c) =>
      c.run.paired && (1 + c.target.more_base_urls.length) * (1 + c.target.more_models.length) !== 2,
    message:
      'expected exactly two targets with paired: two endpoints (--base-url A --base-url B) or two models (--model A --model B), the first the base, the second the one judged against it',
    sources: [...rawKeysOf('paired'), ...rawKeysOf('more_base_urls'), ...rawKeysOf('more_models')],
  },
  // --paired-mode together loads both targets at once: on one server they would slow each other, and
  // a pair would compare the server with itself under twice the load, not A with B.
  {
    path: 'paired_mode',
    fails: (c) => c.run.paired && c.run.paired_mode === 'together' && !separateEndpoints(c.target),
    message:
      'expected two different endpoints with paired_mode "together" (--base-url A --base-url B): both targets get the whole level at the same time, so they must be separate servers; two models on one endpoint, or one URL given twice, share one server and would slow each other (use --paired-mode interleave there)',
    sources: [
      ...rawKeysOf('paired_mode'),
      ...rawKeysOf('more_base_urls'),
      ...rawKeysOf('more_models'),
      ...rawKeysOf('base_url'),
    ],
  },
  {
    path: 'paired',
    fails: (c) =>
      c.run.paired &&
      (c.load.mode !== 'concurrency' ||
        c.run.search ||
        c.run.refine ||
        c.load.repeat > 1 ||
        c.load.precision !== null ||
        c.load.requests_per_level === null ||
        c.workload.trace !== null ||
        c.workload.sessions),
    message:
      'expected paired with a fixed request count per level in concurrency mode (--requests), without search, refine, repeat, precision, a trace or sessions: the blocks of both targets must be the same size to be paired',
    sources: [
      ...rawKeysOf('paired'),
      ...rawKeysOf('mode'),
      ...rawKeysOf('search'),
      ...rawKeysOf('refine'),
      ...rawKeysOf('repeat'),
      ...rawKeysOf('precision'),
      ...rawKeysOf('duration'),
      ...rawKeysOf('trace'),
      ...rawKeysOf('sessions'),
    ],
  },
  // --search chooses its levels from the ones it ran: nothing else may add or repeat levels.
  {
    path: 'search',
    fails: (c) => c.run.search && (c.run.refine || c.load.repeat > 1 || c.workload.trace !== null),
    message:
      'expected search without refine, repeat or a trace: --search places its own levels between the lowest and highest level given',
    sources: [...rawKeysOf('search'), ...rawKeysOf('refine'), ...rawKeysOf('repeat'), ...rawKeysOf('trace')],
  },
  {
    path: 'search',
    fails: (c) =>
      c.run.search && new Set(c.load.mode === 'request_rate' ? c.load.rates : c.load.levels).size < 2,
    message:
      'expected two levels or more with search (e.g. --levels 1,64): the lowest and highest bound the range it searches',
    sources: [...rawKeysOf('search'), ...rawKeysOf('levels'), ...rawKeysOf('rates')],
  },
  {
    path: 'search_tolerance',
    fails: (c) => c.run.search_tolerance !== null && !c.run.search,
    message: "expected --search with --search-tolerance: the tolerance is the search's",
    sources: [...rawKeysOf('search_tolerance'), ...rawKeysOf('search')],
  },
  {
    path: 'repeat',
    fails: (c) => c.load.repeat > 1 && c.workload.trace !== null,
    message:
      'expected repeat or a trace, not both: a trace replays its own requests on its own clock; replay it in separate runs and compare them',
    sources: [...rawKeysOf('repeat'), ...rawKeysOf('trace')],
  },
  // A ramp is one level whose streams rise over its seconds: nothing may add, repeat or resize levels.
  {
    path: 'ramp',
    fails: (c) =>
      c.load.ramp_s !== null &&
      (c.load.mode !== 'concurrency' ||
        c.workload.trace !== null ||
        c.workload.sessions ||
        c.run.search ||
        c.run.refine ||
        c.run.paired ||
        c.load.repeat > 1 ||
        c.load.precision !== null),
    message:
      'expected a ramp in concurrency mode without a trace, sessions, search, refine, paired, repeat or precision: the ramp is one level whose streams rise from 1 to the highest level over its seconds',
    sources: [
      ...rawKeysOf('ramp'),
      ...rawKeysOf('mode'),
      ...rawKeysOf('trace'),
      ...rawKeysOf('sessions'),
      ...rawKeysOf('search'),
      ...rawKeysOf('refine'),
      ...rawKeysOf('paired'),
      ...rawKeysOf('repeat'),
      ...rawKeysOf('precision'),
    ],
    settings: ['ramp'],
  },
  {
    path: 'max_cost',
    fails: (c) => c.run.max_cost !== null && c.pricing === null,
    message:
      'expected prices to estimate the cost with ([pricing] input_per_mtok and output_per_mtok) when max_cost is set, got none',
    sources: [['pricing'], ['max_cost']],
  },
]

/**
 * --ramp: the run is one timed level of the highest level's streams, lasting the ramp's seconds
 * (its streams' starts spread over them: run/plan/level-plan.ts), without the drift control (there
 * is no first level to measure again). Every other part of the run then treats it as a level.
 */
function rampAsOneLevel(config: RunConfig): void {
  const seconds = config.load.ramp_s
  if (seconds === null) return
  config.load.levels = [Math.max(...config.load.levels)]
  config.load.duration_per_level_s = seconds
  config.load.requests_per_level = null
  config.load.warmup_s = 0
  config.load.cooldown_s = 0
  config.load.control = false
}

/** The shortest prompt a length can draw (normal draws are clamped at 1). */
/**
 * Two targets on two servers, as --paired-mode together needs: two endpoints (not two models on one)
 * whose URLs differ beyond a trailing slash. Two ports of one host pass: the URL cannot tell whether
 * they share hardware, and the docs say to keep interleave then.
 */
function separateEndpoints(target: RunConfig['target']): boolean {
  const [second] = target.more_base_urls
  if (target.more_models.length > 0 || second === undefined) return false
  const plain = (url: string) => url.trim().replace(/\/+$/, '').toLowerCase()
  return plain(typeof second === 'string' ? second : second.url) !== plain(target.base_url)
}

function shortestInput(spec: LengthSpec): number {
  if (spec.kind === 'fixed') return spec.value
  if (spec.kind === 'uniform') return spec.min
  return 1
}

function sizedOnce({ requests_per_level: n, duration_per_level_s: t }: RunConfig['load']): boolean {
  return n === null ? t !== null && t > 0 : t === null && n > 0
}

/**
 * Checks that only the merged result can fail (e.g. no source named a model). Reported under "defaults"
 * since the value is still the default. A check is skipped when a source that failed could have set the
 * value (it mentions the key, or could not be parsed at all): its complaint would likely be wrong, and
 * the real problem is already reported.
 */
function finalIssues(config: RunConfig, layers: Layer[], ranked: readonly Layer[]): ConfigIssue[] {
  const failed = layers.filter((layer) => layer.patch === null)
  const mightSet = (sources: string[][]) =>
    failed.some((l) => l.raw === UNPARSED || sources.some((at) => valueAt(l.raw, at) !== undefined))
  return FINAL_CHECKS.filter((check) => check.fails(config) && !mightSet(check.sources)).map((check) => {
    const places = (check.settings ?? []).flatMap((id) => {
      const place = placeSet(ranked, id)
      return place === null ? [] : [place]
    })
    return {
      file: places.length === 0 ? 'defaults' : places.join(' and '),
      path: check.path,
      message: check.message,
    }
  })
}

/** Where a setting was given: the key in the file that set it last, or its flag; null = the default. */
function placeSet(ranked: readonly Layer[], id: SettingId): string | null {
  const [section, name] = SETTINGS[id].at as [string, string]
  const winner = ranked.findLast(
    (layer) =>
      (layer.patch as Record<string, Record<string, unknown> | undefined> | null)?.[section]?.[name] !==
      undefined,
  )
  if (winner === undefined) return null
  return winner.file === undefined ? flagOf(id) : `${keyIn(winner as FileLayer, id)} in ${winner.file}`
}

// ---------------------------------------------------------------------------------------------------
// Reading and parsing
// ---------------------------------------------------------------------------------------------------

function readText(file: string): Result<string> {
  try {
    return { ok: true, value: readTextFile(file) }
  } catch (err) {
    // A pipe or a directory, refused before it is opened (a FIFO would wait for a writer).
    if (err instanceof NotRegularFileError)
      return { ok: false, issue: { file, path: '', message: `expected a readable file, got ${err.reason}` } }
    if (err instanceof NotTextError)
      return { ok: false, issue: { file, path: '', message: `expected a text file, got ${err.reason}` } }
    return { ok: false, issue: { file, path: '', message: `expected a readable file, got ${fsReason(err)}` } }
  }
}

function fsReason(err: unknown): string {
  const code = err instanceof Error && 'code' in err ? err.code : undefined
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EISDIR') return 'a directory'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  return err instanceof Error ? err.message : String(err)
}

function parseJson(file: string, text: string): Result<unknown> {
  const parsed = parseJsonc(text)
  if (parsed.ok) return { ok: true, value: parsed.value }
  return {
    ok: false,
    issue: { file, path: '', message: jsonSyntaxMessage(text, parsed.offset, parsed.expected) },
  }
}

function parseTomlText(file: string, text: string): Result<unknown> {
  try {
    return { ok: true, value: parseToml(text) }
  } catch (err) {
    if (!(err instanceof TomlError)) throw err
    // The message's first line is the reason; the rest is a code excerpt we replace by line/column.
    const reason = (err.message.split('\n', 1)[0] ?? '').replace(/^Invalid TOML document: /, '')
    const message = `expected valid TOML, got a syntax error at line ${err.line}, column ${err.column}: ${reason}`
    return { ok: false, issue: { file, path: '', message } }
  }
}

/** Where the first syntax error is (line, column), what was expected there and the word found instead. */
function jsonSyntaxMessage(text: string, offset: number, expected: string): string {
  const word =
    offset >= text.length ? '' : (text.slice(offset).split(/\s/, 1)[0] || text.charAt(offset)).slice(0, 12)
  const got = word === '' ? 'end of file' : JSON.stringify(word)
  const hint = word.startsWith("'") ? ' (JSON strings use double quotes)' : ''
  return `expected ${expected} at ${lineColumn(text, offset)}, got ${got}${hint}`
}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n')
  return `line ${before.length}, column ${(before.at(-1) ?? '').length + 1}`
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
