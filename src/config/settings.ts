/**
 * Every setting a user can give, declared once: where it lands in RunConfig, its key in settings.json
 * and in config.toml, its flag, the schema leaf that validates it and the help that describes it.
 * The file schemas, the flag parser, the layering and the --help defaults are all derived from this
 * table (docs/configuration.md lists the keys as users write them). Adding a setting is one entry here
 * plus the code that uses the value; one with a flag also writes --help's flag table anew
 * (test/unit/setting-flag-table.test.ts says how).
 *
 * Defaults live in DEFAULTS (load.ts), one typed RunConfig: the help text reads them from there
 * through `at` (setting-defaults.ts), so the two cannot drift.
 */

import { parseLength } from '../workload/lengths.js'
import type { z } from '../zod.js'
import { normalizeHeaders, splitHeaderLine } from './headers.js'
import {
  arrival,
  audioSpec,
  authMode,
  baseUrl,
  bool,
  cacheResetMode,
  cancelAfter,
  cancelAfterFlag,
  endpoint,
  envHeaderTable,
  envVarName,
  flagMode,
  folderPath,
  gateFloors,
  gateThresholds,
  headerLines,
  headerTable,
  imageSpec,
  inputLength,
  keyFileRef,
  levels,
  loadMode,
  metricsUrls,
  modelId,
  moreBaseUrls,
  moreModels,
  nonEmptyText,
  nonNegativeInt,
  nonNegativeSeconds,
  outputLength,
  pairedMode,
  percentiles,
  plainFileName,
  port,
  positiveInt,
  positiveNumber,
  positiveSeconds,
  precisionTable,
  price,
  protocol,
  rates,
  settingsMode,
  share,
  sloTable,
  splitWeights,
  successRatePercent,
  traceSpeeds,
  workers,
} from './schema.js'
import type { MoreBaseUrl, RunConfig } from './types.js'
import { trimTrailingSlashes } from './url.js'

/** Where a setting lands: a section of RunConfig and a key in it. */
export type ConfigPath = {
  [S in keyof RunConfig]-?: readonly [S, keyof NonNullable<RunConfig[S]> & string]
}[keyof RunConfig]

/**
 * How a flag's text becomes the value validated by the schema. Bad numbers stay NaN (and lengths stay
 * text) so the schema's message names the flag and what it expected.
 */
export type FlagKind =
  | 'string'
  | 'number'
  /** "1,4,8" → [1, 4, 8] */
  | 'list'
  /** repeatable: --x A --x B → ["A", "B"] */
  | 'strings'
  /** a count, or a distribution such as normal(512,64) */
  | 'length'
  /** "ttft_p95=800,e2e_p99=5000" → { ttft_p95: 800, ... } (the older ttft_p95_ms is read too) */
  | 'slo'
  /** "ttft_p95=5%,tput=3%" → { ttft_p95: 5, tput: 3 } */
  | 'precision'
  /** a number or "auto" */
  | 'workers'
  /** --x sets true */
  | 'switch'
  /** --no-x sets false */
  | 'negated'

/** The value a flag of each kind carries into the config loader (ConfigFlags). */
interface FlagValues {
  string: string
  number: number
  list: number[]
  strings: string[]
  length: number | string
  slo: Record<string, number>
  precision: Record<string, number>
  workers: number | 'auto'
  switch: boolean
  negated: boolean
}

export interface FlagDecl {
  /** Without the dashes: "connect-timeout", "no-preflight". */
  name: string
  kind: FlagKind
  /** Placeholder in --help, e.g. "SECONDS". */
  value?: string
  help: string
  /** Where --help lists it: with the target (run, check) or with the load (run, demo). */
  group: 'target' | 'load'
  /** The default as --help says it, when DEFAULTS cannot say it (null there, or not a plain value). */
  shownDefault?: string
  /** The flag's own schema, when its spelling differs from the files' (--mode rate). */
  schema?: () => z.ZodType
  /**
   * A string flag that may be repeated: the first value is this setting's, the others go to the
   * named list setting (--base-url A --base-url B → base_url A, more_base_urls [B]).
   */
  rest?: 'more_base_urls' | 'more_models'
}

/** A key in one file: its dotted path, and the schema when the file spells the value its own way. */
export interface SourceKey {
  path: string
  schema?: () => z.ZodType
}

export interface Setting {
  at: ConfigPath
  /** What it does, for readers of the files (init's notes and comments); the flag's help when absent. */
  doc?: string
  /** No default can be right (base_url, model): the files say it is required. */
  required?: true
  /** The schema leaf (without .optional()) every source validates the value with, unless it says otherwise. */
  schema: () => z.ZodType
  /** From the validated value to RunConfig's (e.g. a length's text to a LengthSpec); identity if absent. */
  convert?: (value: never) => unknown
  /** settings.json key. */
  json?: string | SourceKey
  /** config.toml keys, the first one present winning (a newer table before the older one). */
  toml?: string | SourceKey | (string | SourceKey)[]
  flag?: FlagDecl
  /** Filled from flags by the repeats of this flag (its first value is another setting's): "base-url". */
  repeatOf?: string
}

const trimmedUrl = (url: string): string => trimTrailingSlashes(url)
/** A plain URL stays a string (the run's key and headers); an entry's URL is trimmed and its header names lowered. */
const normalizedMoreBaseUrl = (entry: MoreBaseUrl): MoreBaseUrl => {
  if (typeof entry === 'string') return trimmedUrl(entry)
  const { headers, env_headers, ...rest } = entry
  return {
    ...rest,
    url: trimmedUrl(entry.url),
    ...(headers === undefined ? {} : { headers: headerRecord(headers) }),
    ...(env_headers === undefined ? {} : { env_headers: headerRecord(env_headers) }),
  }
}
const requestRate = (mode: string): RunConfig['load']['mode'] =>
  mode === 'concurrency' || mode === 'concurrency_gradient' ? 'concurrency' : 'request_rate'

/** Runs of one gradient: past this the spread between runs is known and only the wait grows. */
const MAX_REPEAT = 100

/**
 * The table. Its order is the order of --help and of the known keys listed when a key is mistyped.
 * Keyed by the name the flag takes in ConfigFlags (the flag without dashes, positive for --no-x).
 */
export const SETTINGS = {
  // --- target
  base_url: {
    doc: 'server URL, with or without a trailing /v1',
    required: true,
    at: ['target', 'base_url'],
    schema: baseUrl,
    convert: trimmedUrl,
    json: 'llm.base_url',
    toml: 'target.base_url',
    flag: {
      name: 'base-url',
      kind: 'string',
      value: 'URL',
      help: 'server base URL, with or without /v1; repeat for several endpoints, each given its share of the load',
      group: 'target',
      rest: 'more_base_urls',
    },
  },
  more_base_urls: {
    doc: 'more endpoints beside base_url, sent the same requests (path, key, headers), or { url, api_key_env, headers, env_headers } entries with their own key or headers; a level is split between them by endpoint_weights',
    at: ['target', 'more_base_urls'],
    repeatOf: 'base-url',
    schema: moreBaseUrls,
    convert: (entries: MoreBaseUrl[]) => entries.map(normalizedMoreBaseUrl),
    json: 'llm.more_base_urls',
    toml: 'target.more_base_urls',
  },
  endpoint_weights: {
    doc: "one weight per endpoint (base_url first, then more_base_urls): each endpoint's share of every level; [] = equal",
    at: ['target', 'endpoint_weights'],
    schema: splitWeights,
    json: 'llm.endpoint_weights',
    toml: 'target.endpoint_weights',
    flag: {
      name: 'endpoint-weights',
      kind: 'list',
      value: '3,1',
      help: 'with several --base-url: their shares of every level, in order',
      group: 'target',
      shownDefault: 'equal',
    },
  },
  endpoint: {
    doc: 'path of the API, joined to base_url without doubling /v1',
    at: ['target', 'endpoint'],
    schema: endpoint,
    json: 'llm.endpoint',
    toml: 'target.endpoint',
    flag: { name: 'endpoint', kind: 'string', value: 'PATH', help: 'endpoint path', group: 'target' },
  },
  protocol: {
    doc: 'wire protocol: chat, completions, responses (OpenAI Responses API), messages (Anthropic Messages) or embeddings; inferred from the endpoint when not given, and brings its endpoint when given alone',
    at: ['target', 'protocol'],
    schema: protocol,
    json: 'llm.protocol',
    toml: 'target.protocol',
    flag: {
      name: 'protocol',
      kind: 'string',
      value: 'chat|completions|responses|messages|embeddings',
      help: 'wire protocol',
      // DEFAULTS holds chat for a target with no endpoint either; the endpoint decides first.
      shownDefault: 'from the endpoint, else chat',
      group: 'target',
    },
  },
  model: {
    doc: 'model id as the server lists it (`llmbench models`)',
    required: true,
    at: ['target', 'model'],
    schema: modelId,
    json: 'llm.model',
    toml: 'target.model',
    flag: {
      name: 'model',
      kind: 'string',
      value: 'ID',
      help: 'model id; repeat for several models (or LoRA adapters), each given its share of the load',
      group: 'target',
      rest: 'more_models',
    },
  },
  more_models: {
    doc: 'more model ids (or LoRA adapters) beside model: every endpoint is sent each, in shares by model_weights',
    at: ['target', 'more_models'],
    repeatOf: 'model',
    schema: moreModels,
    json: 'llm.more_models',
    toml: 'target.more_models',
  },
  model_weights: {
    doc: "one weight per model (model first, then more_models): each model's share of every level; [] = equal",
    at: ['target', 'model_weights'],
    schema: splitWeights,
    json: 'llm.model_weights',
    toml: 'target.model_weights',
    flag: {
      name: 'model-weights',
      kind: 'list',
      value: '3,1',
      help: 'with several --model: their shares of every level, in order',
      group: 'target',
      shownDefault: 'equal',
    },
  },
  api_key_env: {
    doc: 'NAME of the environment variable holding the API key; never the key itself',
    at: ['target', 'api_key_env'],
    schema: envVarName,
    json: 'llm.api_key_env',
    toml: 'target.api_key_env',
    flag: {
      name: 'api-key-env',
      kind: 'string',
      value: 'NAME',
      help: 'environment variable holding the API key',
      group: 'target',
    },
  },
  api_key_file: {
    doc: 'set only by a Claude Code settings.json or a Codex config.toml that holds the key: where it is, never the key',
    at: ['target', 'api_key_file'],
    schema: keyFileRef,
  },
  auth: {
    doc: 'where the key goes: auto, bearer (Authorization: Bearer), api-key (Azure OpenAI), x-api-key (Anthropic) or none; auto = x-api-key for the messages protocol, api-key for an *.openai.azure.com host, else bearer',
    at: ['target', 'auth'],
    schema: authMode,
    json: 'llm.auth',
    toml: 'target.auth',
    flag: {
      name: 'auth',
      kind: 'string',
      value: 'MODE',
      help: 'where the API key goes: bearer, api-key (Azure), x-api-key (Anthropic), none or auto',
      group: 'target',
    },
  },
  header: {
    doc: 'extra headers of every request, e.g. { "X-Team": "bench" }; values of names with key, token, secret or auth in them are never printed',
    at: ['target', 'headers'],
    schema: headerTable,
    convert: headerRecord,
    json: 'llm.headers',
    toml: 'target.headers',
    flag: {
      name: 'header',
      kind: 'strings',
      value: "'NAME: VALUE'",
      help: 'an extra header of every request, repeatable',
      group: 'target',
      shownDefault: 'none',
      schema: headerLines,
    },
  },
  env_headers: {
    doc: 'headers whose value is read from an environment variable, e.g. { "X-Gateway-Key": "GATEWAY_KEY" }: keeps a secret header out of the file',
    at: ['target', 'env_headers'],
    schema: envHeaderTable,
    convert: headerRecord,
    json: 'llm.env_headers',
    toml: 'target.env_headers',
  },
  // --- load
  mode: {
    doc: 'each concurrency level in turn ("concurrency_gradient" in config.toml), or "request_rate": an open loop per rate',
    at: ['load', 'mode'],
    schema: settingsMode,
    convert: requestRate,
    json: 'bench.mode',
    toml: { path: 'load.mode', schema: loadMode },
    flag: {
      name: 'mode',
      kind: 'string',
      value: 'concurrency|rate',
      help: 'closed loop per concurrency level, or open loop per request rate',
      group: 'load',
      schema: flagMode,
    },
  },
  levels: {
    doc: 'concurrent requests per level',
    at: ['load', 'levels'],
    schema: levels,
    json: 'bench.concurrency_levels',
    toml: 'load.levels',
    flag: { name: 'levels', kind: 'list', value: '1,4,8', help: 'concurrency levels', group: 'load' },
  },
  rates: {
    at: ['load', 'rates'],
    schema: rates,
    json: 'bench.rates',
    toml: 'load.rates',
    flag: {
      name: 'rates',
      kind: 'list',
      value: '1,2,4',
      help: 'request rates per second (--mode rate)',
      group: 'load',
    },
  },
  arrival: {
    at: ['load', 'arrival'],
    schema: arrival,
    json: 'bench.arrival',
    toml: 'load.arrival',
    flag: {
      name: 'arrival',
      kind: 'string',
      value: 'constant|poisson|gamma',
      help: 'arrival process of --mode rate',
      group: 'load',
    },
  },
  burstiness: {
    at: ['load', 'burstiness'],
    schema: () => positiveNumber('a positive gamma shape (1 = Poisson, below 1 = burstier)'),
    json: 'bench.burstiness',
    toml: 'load.burstiness',
    flag: {
      name: 'burstiness',
      kind: 'number',
      value: 'K',
      help: 'gamma shape: below 1 burstier than Poisson, above 1 smoother',
      group: 'load',
    },
  },
  max_in_flight: {
    at: ['load', 'max_in_flight'],
    schema: positiveInt,
    json: 'bench.max_in_flight',
    toml: 'load.max_in_flight',
    flag: {
      name: 'max-in-flight',
      kind: 'number',
      value: 'N',
      help: 'rate mode: most requests in flight; later arrivals wait, and it shows',
      group: 'load',
    },
  },
  stagger: {
    doc: "concurrency mode: each level's streams start spread over three quarters of one request's duration, so they are not in step; false = all at once",
    at: ['load', 'stagger'],
    schema: bool,
    json: 'bench.stagger',
    toml: 'load.stagger',
    flag: {
      name: 'no-stagger',
      kind: 'negated',
      help: "start a level's streams all at once (they may then run in step, a convoy)",
      group: 'load',
    },
  },
  cancel_share: {
    doc: 'share of requests aborted mid-stream (0 to 1; 0 = none): the client closes the connection after cancel_after tokens, and the run checks the server freed the slot',
    at: ['load', 'cancel_share'],
    schema: share,
    json: 'bench.cancel_share',
    toml: 'load.cancel_share',
    flag: {
      name: 'cancel-share',
      kind: 'number',
      value: 'SHARE',
      help: 'share of requests aborted mid-stream (0 to 1), counted apart from successes and failures',
      group: 'load',
    },
  },
  cancel_after: {
    doc: 'when a cancelled request is aborted: "first" (at its first token) or a number of token-bearing events',
    at: ['load', 'cancel_after'],
    schema: cancelAfter,
    // The flag's count arrives as text ("16"): a number from here on.
    convert: (value: 'first' | number | string) => (value === 'first' ? value : Number(value)),
    json: 'bench.cancel_after',
    toml: 'load.cancel_after',
    flag: {
      name: 'cancel-after',
      kind: 'string',
      value: 'first|N',
      help: 'abort a cancelled request at its first token, or after N tokens',
      group: 'load',
      schema: cancelAfterFlag,
    },
  },
  ramp: {
    doc: 'a continuous ramp instead of steps (concurrency mode): one level whose streams start one after another, evenly over these seconds, from 1 to the highest level; the knee is read on the ramp',
    at: ['load', 'ramp_s'],
    schema: positiveSeconds,
    json: 'bench.ramp_seconds',
    toml: 'load.ramp',
    flag: {
      name: 'ramp',
      kind: 'number',
      value: 'SECONDS',
      help: 'streams rise linearly from 1 to the highest --levels over SECONDS (one level), the knee read on the ramp',
      group: 'load',
    },
  },
  requests: {
    doc: 'requests measured at each level (set this or duration_per_level, not both)',
    at: ['load', 'requests_per_level'],
    schema: positiveInt,
    json: 'bench.requests_per_level',
    toml: 'load.requests_per_level',
    flag: {
      name: 'requests',
      kind: 'number',
      value: 'N',
      help: 'measured requests per level',
      group: 'load',
    },
  },
  duration: {
    doc: 'seconds per level instead of a request count (not both)',
    at: ['load', 'duration_per_level_s'],
    schema: positiveSeconds,
    json: 'bench.duration_per_level',
    toml: 'load.duration_per_level',
    flag: {
      name: 'duration',
      kind: 'number',
      value: 'SECONDS',
      help: 'per level, instead of --requests',
      group: 'load',
    },
  },
  precision: {
    doc: 'run each level until these figures are this precise: the half-width of their 95% interval, percent of the figure, e.g. { ttft_p95 = 5, tput = 3 }; requests_per_level is then the floor',
    at: ['load', 'precision'],
    schema: precisionTable,
    json: 'bench.precision',
    toml: 'load.precision',
    flag: {
      name: 'precision',
      kind: 'precision',
      value: 'FIGURE=PCT,...',
      help: 'send each level until these figures are precise, e.g. ttft_p95=5%,tput=3% (--requests is then the floor)',
      group: 'load',
    },
  },
  max_requests: {
    doc: 'with precision: the most requests a level sends (default 10 × requests_per_level)',
    at: ['load', 'max_requests_per_level'],
    schema: positiveInt,
    json: 'bench.max_requests_per_level',
    toml: 'load.max_requests_per_level',
    flag: {
      name: 'max-requests',
      kind: 'number',
      value: 'N',
      help: 'with --precision: the most requests per level (default 10 × --requests)',
      group: 'load',
    },
  },
  max_duration: {
    doc: 'with precision: the longest a level sends, seconds (default: no limit but max_requests_per_level)',
    at: ['load', 'max_duration_per_level_s'],
    schema: positiveSeconds,
    json: 'bench.max_duration_per_level',
    toml: 'load.max_duration_per_level',
    flag: {
      name: 'max-duration',
      kind: 'number',
      value: 'SECONDS',
      help: 'with --precision: the longest a level sends',
      group: 'load',
    },
  },
  warmup_seconds: {
    at: ['load', 'warmup_s'],
    schema: nonNegativeSeconds,
    json: 'bench.warmup_seconds',
    toml: 'load.warmup_seconds',
    flag: {
      name: 'warmup-seconds',
      kind: 'number',
      value: 'SECONDS',
      help: 'timed levels: excluded window before the measured one',
      group: 'load',
    },
  },
  cooldown_seconds: {
    at: ['load', 'cooldown_s'],
    schema: nonNegativeSeconds,
    json: 'bench.cooldown_seconds',
    toml: 'load.cooldown_seconds',
    flag: {
      name: 'cooldown-seconds',
      kind: 'number',
      value: 'SECONDS',
      help: 'timed levels: load kept on after the measured window, excluded',
      group: 'load',
    },
  },
  warmup: {
    doc: 'requests sent first at each level and excluded from every figure',
    at: ['load', 'warmup_requests'],
    schema: nonNegativeInt,
    json: 'bench.warmup_requests',
    toml: 'load.warmup_requests',
    flag: {
      name: 'warmup',
      kind: 'number',
      value: 'N',
      help: 'warm-up requests per level, excluded from figures',
      group: 'load',
    },
  },
  control: {
    doc: 'concurrency gradients: measure the first level again after the last, briefly, to see whether the environment drifted',
    at: ['load', 'control'],
    schema: bool,
    json: 'bench.control',
    toml: 'load.control',
    flag: {
      name: 'no-control',
      kind: 'negated',
      help: 'do not measure the first level again after the last (the drift control)',
      group: 'load',
    },
  },
  repeat: {
    doc: 'run the whole gradient N times, interleaved by level (each level N times back to back), for the spread between runs and the knee of each',
    at: ['load', 'repeat'],
    schema: () => positiveInt(MAX_REPEAT),
    json: 'bench.repeat',
    toml: 'load.repeat',
    flag: {
      name: 'repeat',
      kind: 'number',
      value: 'N',
      help: 'run each level N times back to back: between-run spread and the knee of each run',
      group: 'load',
    },
  },
  // --- workload
  input_tokens: {
    doc: 'prompt length in tokens: a count, normal(mean, sd), uniform(min, max) or "dataset"',
    at: ['workload', 'input'],
    schema: inputLength,
    convert: parseValidLength,
    json: 'bench.input_tokens',
    // [workload] is the newer home of the lengths; [load] keeps the original input_tokens and max_tokens.
    toml: ['workload.input_tokens', 'load.input_tokens'],
    flag: {
      name: 'input-tokens',
      kind: 'length',
      value: 'N',
      help: 'prompt length: N, normal(MEAN,SD), uniform(MIN,MAX) or dataset',
      group: 'load',
    },
  },
  output_tokens: {
    doc: 'tokens to generate per request (max_tokens), drawn the same way',
    at: ['workload', 'output'],
    schema: outputLength,
    convert: parseValidLength,
    json: 'bench.output_tokens',
    toml: ['workload.output_tokens', 'load.max_tokens'],
    flag: {
      name: 'output-tokens',
      kind: 'length',
      value: 'N',
      help: 'max_tokens per request: N, normal(MEAN,SD), uniform(MIN,MAX) or dataset',
      group: 'load',
    },
  },
  profile: {
    at: ['workload', 'profile'],
    schema: () => nonEmptyText('"chat", "rag", "codegen" or a path to a profile file'),
    json: 'bench.profile',
    toml: 'workload.profile',
    flag: {
      name: 'profile',
      kind: 'string',
      value: 'NAME|FILE',
      help: 'workload preset: chat, rag, codegen, or a profile file',
      group: 'load',
    },
  },
  dataset: {
    at: ['workload', 'dataset'],
    schema: () => nonEmptyText('a path to a JSONL or ShareGPT JSON file'),
    json: 'bench.dataset',
    toml: 'workload.dataset',
    flag: {
      name: 'dataset',
      kind: 'string',
      value: 'FILE',
      help: 'prompts from JSONL or ShareGPT JSON',
      group: 'load',
    },
  },
  tokenizer: {
    at: ['workload', 'tokenizer'],
    schema: () => nonEmptyText('"o200k", "cl100k" or a path to a tokenizer.json'),
    json: 'bench.tokenizer',
    toml: 'workload.tokenizer',
    flag: {
      name: 'tokenizer',
      kind: 'string',
      value: 'NAME|FILE',
      help: 'o200k, cl100k or a tokenizer.json',
      group: 'load',
    },
  },
  shared_prefix: {
    at: ['workload', 'shared_prefix'],
    schema: nonNegativeInt,
    json: 'bench.shared_prefix',
    toml: 'workload.shared_prefix',
    flag: {
      name: 'shared-prefix',
      kind: 'number',
      value: 'N',
      help: 'tokens every prompt shares (prefix-cache test)',
      group: 'load',
    },
  },
  images: {
    doc: 'synthetic PNG images sent with every prompt, "COUNTxWIDTHxHEIGHT" (e.g. "2x448x448"), as the protocol carries them (chat image_url, Responses input_image, Messages image blocks)',
    at: ['workload', 'images'],
    schema: imageSpec,
    json: 'bench.images',
    toml: 'workload.images',
    flag: {
      name: 'images',
      kind: 'string',
      value: 'COUNTxWxH',
      help: 'synthetic PNG images with every prompt, e.g. 2x448x448',
      group: 'load',
    },
  },
  audio: {
    doc: 'synthetic speech-like WAV clips sent with every chat prompt, "COUNTxSECONDS" (e.g. "1x5"), as input_audio parts',
    at: ['workload', 'audio'],
    schema: audioSpec,
    json: 'bench.audio',
    toml: 'workload.audio',
    flag: {
      name: 'audio',
      kind: 'string',
      value: 'COUNTxSECONDS',
      help: 'synthetic WAV clips with every chat prompt, e.g. 1x5',
      group: 'load',
    },
  },
  response_schema: {
    doc: 'structured output: "builtin" (an invoice record) or a JSON Schema file; chat bodies ask for it with response_format json_schema (strict), and each answer is validated against it',
    at: ['workload', 'response_schema'],
    schema: () => nonEmptyText('"builtin" or a path to a JSON Schema file'),
    json: 'bench.response_schema',
    toml: 'workload.response_schema',
    flag: {
      name: 'response-schema',
      kind: 'string',
      value: 'builtin|FILE',
      help: 'ask for JSON matching a schema (response_format) and count the answers that validate',
      group: 'load',
    },
  },
  tools: {
    doc: 'tool calling: "builtin" (4 functions: weather, search, calendar, calculator) or a JSON file holding an OpenAI tools array; sent with every chat request, each call\'s arguments validated against its function\'s parameters',
    at: ['workload', 'tools'],
    schema: () => nonEmptyText('"builtin" or a path to a JSON file holding an OpenAI tools array'),
    json: 'bench.tools',
    toml: 'workload.tools',
    flag: {
      name: 'tools',
      kind: 'string',
      value: 'builtin|FILE',
      help: 'send function tools with every request and time and validate the tool calls',
      group: 'load',
    },
  },
  tool_choice: {
    doc: 'with tools: "auto", "required", "none" or the name of one function to call',
    at: ['workload', 'tool_choice'],
    schema: () => nonEmptyText('"auto", "required", "none" or a function name'),
    json: 'bench.tool_choice',
    toml: 'workload.tool_choice',
    flag: {
      name: 'tool-choice',
      kind: 'string',
      value: 'auto|required|none|NAME',
      help: 'with --tools: whether and which function the model must call',
      group: 'load',
    },
  },
  sessions: {
    doc: 'multi-turn sessions: each stream runs conversations turn by turn, every request carrying the history with the replies generated in this run; from --dataset conversations, else synthetic',
    at: ['workload', 'sessions'],
    schema: bool,
    json: 'bench.sessions',
    toml: 'workload.sessions',
    flag: {
      name: 'sessions',
      kind: 'switch',
      help: 'multi-turn sessions (from --dataset conversations, else synthetic)',
      group: 'load',
    },
  },
  turns: {
    at: ['workload', 'turns'],
    schema: positiveInt,
    json: 'bench.turns',
    toml: 'workload.turns',
    flag: {
      name: 'turns',
      kind: 'number',
      value: 'N',
      help: 'user turns per synthetic session (--sessions)',
      group: 'load',
    },
  },
  think_time: {
    at: ['workload', 'think_time_s'],
    schema: nonNegativeSeconds,
    json: 'bench.think_time_seconds',
    toml: 'workload.think_time_seconds',
    flag: {
      name: 'think-time',
      kind: 'number',
      value: 'SECONDS',
      help: 'pause between a reply and the next turn of a session',
      group: 'load',
    },
  },
  jobs: {
    doc: 'agentic jobs: each stream runs jobs, graphs of turns with tool waits, fan-outs and joins, every request carrying its branch of the history with the replies generated in this run; from a --dataset job file, else synthetic (--turns steps, --fan-out, --tool-wait)',
    at: ['workload', 'jobs'],
    schema: bool,
    json: 'bench.jobs',
    toml: 'workload.jobs',
    flag: {
      name: 'jobs',
      kind: 'switch',
      help: 'agentic jobs (from a --dataset job file, else synthetic); concurrency counts jobs',
      group: 'load',
    },
  },
  fan_out: {
    at: ['workload', 'fan_out'],
    schema: positiveInt,
    json: 'bench.fan_out',
    toml: 'workload.fan_out',
    flag: {
      name: 'fan-out',
      kind: 'number',
      value: 'N',
      help: 'parallel sub-agent turns at step 1 of a synthetic job, joined at step 2 (--jobs)',
      group: 'load',
    },
  },
  tool_wait: {
    at: ['workload', 'tool_wait_s'],
    schema: nonNegativeSeconds,
    json: 'bench.tool_wait_seconds',
    toml: 'workload.tool_wait_seconds',
    flag: {
      name: 'tool-wait',
      kind: 'number',
      value: 'SECONDS',
      help: 'mean tool wait after a synthetic job turn, exponential (--jobs)',
      group: 'load',
    },
  },
  ignore_eos: {
    at: ['workload', 'ignore_eos'],
    schema: bool,
    json: 'bench.ignore_eos',
    toml: 'workload.ignore_eos',
    flag: {
      name: 'ignore-eos',
      kind: 'switch',
      help: 'send ignore_eos and min_tokens (vLLM, SGLang, TGI)',
      group: 'load',
    },
  },
  calibrate: {
    at: ['workload', 'calibrate'],
    schema: bool,
    json: 'bench.calibrate',
    toml: 'workload.calibrate',
    flag: {
      name: 'no-calibrate',
      kind: 'negated',
      help: "skip sizing prompts by the server's prompt_tokens (part of the preflight)",
      group: 'load',
    },
  },
  seed: {
    at: ['workload', 'seed'],
    schema: nonNegativeInt,
    json: 'bench.seed',
    toml: 'workload.seed',
    flag: {
      name: 'seed',
      kind: 'number',
      value: 'N',
      help: 'seed of prompts, lengths and arrivals',
      group: 'load',
    },
  },
  // --- trace replay (src/workload/trace-file.ts)
  trace: {
    doc: 'replay a serving trace on its own clock: Mooncake JSONL, BurstGPT CSV or Azure LLM inference CSV (one request per row, its lengths and send time)',
    at: ['workload', 'trace'],
    schema: () => nonEmptyText('a path to a Mooncake JSONL, BurstGPT CSV or Azure LLM inference CSV trace'),
    json: 'bench.trace',
    toml: 'workload.trace',
    flag: {
      name: 'trace',
      kind: 'string',
      value: 'FILE',
      help: 'replay a trace (Mooncake JSONL, BurstGPT or Azure CSV) on its own clock',
      group: 'load',
    },
  },
  trace_speed: {
    doc: 'replay speeds, one level each: the trace offsets divided by the speed',
    at: ['workload', 'trace_speeds'],
    schema: traceSpeeds,
    json: 'bench.trace_speed',
    toml: 'workload.trace_speed',
    flag: {
      name: 'trace-speed',
      kind: 'list',
      value: '1,2,4',
      help: 'one level per speed, each replaying the trace that much faster',
      group: 'load',
    },
  },
  trace_start: {
    doc: 'where the replayed window opens, trace seconds after its first row',
    at: ['workload', 'trace_start_s'],
    schema: nonNegativeSeconds,
    json: 'bench.trace_start',
    toml: 'workload.trace_start',
    flag: {
      name: 'trace-start',
      kind: 'number',
      value: 'SECONDS',
      help: 'replayed window: trace seconds after its first row',
      group: 'load',
    },
  },
  trace_duration: {
    doc: 'length of the replayed window, trace seconds (absent = to the end)',
    at: ['workload', 'trace_duration_s'],
    schema: positiveSeconds,
    json: 'bench.trace_duration',
    toml: 'workload.trace_duration',
    flag: {
      name: 'trace-duration',
      kind: 'number',
      value: 'SECONDS',
      help: 'replayed window length, trace seconds',
      group: 'load',
      shownDefault: 'to the end',
    },
  },
  trace_max_requests: {
    doc: 'at most this many rows of the window (absent = all)',
    at: ['workload', 'trace_max_requests'],
    schema: positiveInt,
    json: 'bench.trace_max_requests',
    toml: 'workload.trace_max_requests',
    flag: {
      name: 'trace-max-requests',
      kind: 'number',
      value: 'N',
      help: 'replay at most the first N rows of the window',
      group: 'load',
      shownDefault: 'all',
    },
  },
  // --- pricing
  max_cost: {
    at: ['run', 'max_cost'],
    schema: () => positiveNumber('a positive amount in the pricing currency'),
    json: 'pricing.max_cost',
    toml: 'pricing.max_cost',
    flag: {
      name: 'max-cost',
      kind: 'number',
      value: 'AMOUNT',
      help: 'refuse to start when the estimated cost is above it',
      group: 'load',
    },
  },
  input_per_mtok: {
    doc: 'price per million input tokens',
    at: ['pricing', 'input_per_mtok'],
    schema: () => price('input'),
    json: 'pricing.input_per_mtok',
    toml: 'pricing.input_per_mtok',
  },
  output_per_mtok: {
    doc: 'price per million output tokens',
    at: ['pricing', 'output_per_mtok'],
    schema: () => price('output'),
    json: 'pricing.output_per_mtok',
    toml: 'pricing.output_per_mtok',
  },
  currency: {
    doc: 'currency of the prices',
    at: ['pricing', 'currency'],
    schema: () => nonEmptyText('a currency name such as "USD"'),
    json: 'pricing.currency',
    toml: 'pricing.currency',
  },
  // --- client
  timeout: {
    doc: 'whole-request timeout, seconds',
    at: ['client', 'timeout_s'],
    schema: positiveSeconds,
    json: 'llm.timeout_seconds',
    toml: 'client.timeout',
    flag: { name: 'timeout', kind: 'number', value: 'SECONDS', help: 'whole-request timeout', group: 'load' },
  },
  stream: {
    doc: 'stream responses; needed to measure TTFT and TPOT',
    at: ['client', 'stream'],
    schema: bool,
    json: 'llm.stream',
    toml: 'client.stream',
    flag: {
      name: 'no-stream',
      kind: 'negated',
      help: 'send stream:false (TTFT then has no meaning)',
      group: 'target',
    },
  },
  connect_timeout: {
    doc: 'connection set-up timeout, seconds',
    at: ['client', 'connect_timeout_s'],
    schema: positiveSeconds,
    toml: 'client.connect_timeout',
    flag: {
      name: 'connect-timeout',
      kind: 'number',
      value: 'SECONDS',
      help: 'connection set-up timeout',
      group: 'load',
    },
  },
  first_token_timeout: {
    doc: 'send-to-first-token timeout, seconds',
    at: ['client', 'first_token_timeout_s'],
    schema: positiveSeconds,
    toml: 'client.first_token_timeout',
    flag: {
      name: 'first-token-timeout',
      kind: 'number',
      value: 'SECONDS',
      help: 'send-to-first-token timeout',
      group: 'load',
      shownDefault: 'the whole-request timeout',
    },
  },
  idle_timeout: {
    doc: 'longest silence between two reads of a response, seconds',
    at: ['client', 'idle_timeout_s'],
    schema: positiveSeconds,
    toml: 'client.idle_timeout',
    flag: {
      name: 'idle-timeout',
      kind: 'number',
      value: 'SECONDS',
      help: 'longest silence between two reads of a response',
      group: 'load',
    },
  },
  retry: {
    doc: 'retries per request; 0 so failures are counted, not hidden',
    at: ['client', 'retry'],
    schema: nonNegativeInt,
    toml: 'client.retry',
    flag: { name: 'retry', kind: 'number', value: 'N', help: 'retries per failed request', group: 'load' },
  },
  workers: {
    at: ['run', 'workers'],
    schema: workers,
    toml: 'client.workers',
    flag: {
      name: 'workers',
      kind: 'workers',
      value: 'N|auto',
      help: 'load-generating threads (auto: one per core, at most one per stream)',
      group: 'load',
    },
  },
  // --- the run
  out: {
    at: ['run', 'out_dir'],
    schema: folderPath,
    flag: {
      name: 'out',
      kind: 'string',
      value: 'DIR',
      help: 'the result folder itself',
      group: 'load',
      shownDefault: 'results/<time>-<model>',
    },
  },
  // --- metrics and gates
  slo: {
    doc: 'objectives, e.g. { "ttft_p95": 800, "tpot_p95": 50 } (metrics ttft, tpot, e2e, and ttfr, ttfo, answer_tpot for reasoning models, jct (job completion time) with --jobs; any percentile)',
    at: ['metrics', 'slo'],
    schema: sloTable,
    json: 'bench.slo',
    toml: 'slo',
    flag: {
      name: 'slo',
      kind: 'slo',
      value: 'KEY=MS,...',
      help: 'objectives, e.g. ttft_p95=800,tpot_p95=50 (metrics ttft, tpot, e2e, ttfr, ttfo, answer_tpot)',
      group: 'load',
    },
  },
  fail_on_slo: {
    at: ['run', 'fail_on_slo'],
    schema: bool,
    flag: {
      name: 'fail-on-slo',
      kind: 'switch',
      help: 'exit 1 when no level meets every SLO',
      group: 'load',
    },
  },
  min_success_rate: {
    doc: 'exit 1 when the lowest level succeeds on fewer, percent; 0 = off',
    at: ['metrics', 'min_success_rate'],
    schema: successRatePercent,
    toml: 'metrics.min_success_rate',
    flag: {
      name: 'min-success-rate',
      kind: 'number',
      value: 'PERCENT',
      help: "exit 1 when the lowest level's success rate is below it (0 = off)",
      group: 'load',
    },
  },
  percentiles: {
    doc: 'percentiles reported for every latency, each in (0, 100]',
    at: ['metrics', 'percentiles'],
    schema: percentiles,
    json: 'bench.percentiles',
    toml: 'metrics.percentiles',
  },
  record_ttft: {
    doc: 'time to first token',
    at: ['metrics', 'record_ttft'],
    schema: bool,
    toml: 'metrics.record_ttft',
  },
  record_tpot: {
    doc: 'time per output token after the first',
    at: ['metrics', 'record_tpot'],
    schema: bool,
    toml: 'metrics.record_tpot',
  },
  record_throughput: {
    doc: 'output tokens/s and requests/s',
    at: ['metrics', 'record_throughput'],
    schema: bool,
    toml: 'metrics.record_throughput',
  },
  output_json: {
    doc: 'summary file name inside the result folder',
    at: ['metrics', 'output_json'],
    schema: plainFileName,
    toml: 'metrics.output_json',
  },
  // --- the server's own metrics
  server_metrics_urls: {
    doc: 'Prometheus metrics URLs scraped during the run; "auto" = /metrics at the target\'s origin',
    at: ['server_metrics', 'urls'],
    schema: metricsUrls,
    json: 'server_metrics.urls',
    toml: 'server_metrics.urls',
    flag: {
      name: 'server-metrics',
      kind: 'strings',
      value: 'URL',
      help: 'a Prometheus metrics URL to scrape during the run, repeatable ("auto": the target\'s /metrics)',
      group: 'load',
    },
  },
  server_metrics: {
    doc: "scrape the server's Prometheus metrics during the run",
    at: ['server_metrics', 'enabled'],
    schema: bool,
    json: 'server_metrics.enabled',
    toml: 'server_metrics.enabled',
    flag: {
      name: 'no-server-metrics',
      kind: 'negated',
      help: "do not scrape the server's metrics",
      group: 'load',
    },
  },
  server_metrics_interval: {
    doc: 'seconds between two scrapes of a metrics URL',
    at: ['server_metrics', 'interval_s'],
    schema: positiveSeconds,
    json: 'server_metrics.interval',
    toml: 'server_metrics.interval',
    flag: {
      name: 'server-metrics-interval',
      kind: 'number',
      value: 'SECONDS',
      help: 'seconds between two scrapes of a metrics URL',
      group: 'load',
    },
  },
  // --- the run, continued
  refine: {
    at: ['run', 'refine'],
    schema: bool,
    flag: {
      name: 'refine',
      kind: 'switch',
      help: 'bisect around the knee with up to 3 extra levels',
      group: 'load',
    },
  },
  paired: {
    at: ['run', 'paired'],
    schema: bool,
    flag: {
      name: 'paired',
      kind: 'switch',
      help: 'two targets (two --base-url or two --model) measured in alternating blocks of each level (ABBA, BAAB), so drift hits both alike; `compare DIR` judges the second against the first pair by pair',
      group: 'load',
    },
  },
  paired_mode: {
    at: ['run', 'paired_mode'],
    schema: pairedMode,
    flag: {
      name: 'paired-mode',
      kind: 'string',
      value: 'interleave|together',
      help: 'with --paired: "interleave" (default) alternates the targets\' blocks, one loaded at a time (shared hardware); "together" loads both with the whole level at once, block by block (separate hardware, half the time)',
      group: 'load',
    },
  },
  gate: {
    at: ['run', 'gate'],
    schema: bool,
    flag: {
      name: 'gate',
      kind: 'switch',
      help: 'with --paired: end the run with the paired judgement of `compare DIR` (written to gate.json) and its exit code: 0 pass, 1 regression, 5 inconclusive',
      group: 'load',
    },
  },
  gate_max_regression: {
    at: ['run', 'gate_max_regression'],
    schema: gateThresholds,
    flag: {
      name: 'max-regression',
      kind: 'string',
      value: 'KEY=N%,...',
      help: 'with --paired --gate: the allowed worsening per figure, as `compare --max-regression` takes it; replaces the defaults',
      group: 'load',
    },
  },
  gate_min_change: {
    at: ['run', 'gate_min_change'],
    schema: gateFloors,
    flag: {
      name: 'min-change',
      kind: 'string',
      value: 'KEY=N,...',
      help: 'with --paired --gate: the absolute floor a regression must also exceed, as `compare --min-change` takes it; merged with the defaults',
      group: 'load',
    },
  },
  search: {
    at: ['run', 'search'],
    schema: bool,
    flag: {
      name: 'search',
      kind: 'switch',
      help: 'search between the lowest and highest level for the highest meeting the SLOs (else the knee)',
      group: 'load',
    },
  },
  search_tolerance: {
    at: ['run', 'search_tolerance'],
    schema: () => positiveNumber('a positive width, in streams or requests per second'),
    flag: {
      name: 'search-tolerance',
      kind: 'number',
      value: 'N',
      help: 'with --search: stop when the bracket is this narrow (default 1 stream, or a twentieth of the top rate)',
      group: 'load',
    },
  },
  reset_cache: {
    doc: 'reset the server\'s prefix/KV cache with its own call: "before-level" (before each measured level, its warm-up included), "before-run" (once, before the first level) or "off"; refused before the run when the server has no such call',
    at: ['run', 'reset_cache'],
    schema: cacheResetMode,
    json: 'bench.reset_cache',
    toml: 'load.reset_cache',
    flag: {
      name: 'reset-cache',
      kind: 'string',
      value: 'before-level|before-run|off',
      help: "reset the server's prefix cache before each level, or once before the run",
      group: 'load',
    },
  },
  history: {
    at: ['run', 'history_dir'],
    schema: folderPath,
    flag: {
      name: 'history',
      kind: 'string',
      value: 'DIR',
      help: "append this run's summary to DIR/history.jsonl",
      group: 'load',
    },
  },
  // --- exports and live metrics (src/report/exports.ts, src/run/level/live-metrics.ts)
  export_parquet: {
    doc: 'also write requests.parquet (typed columns) into the result folder',
    at: ['run', 'export_parquet'],
    schema: bool,
    json: 'bench.parquet',
    toml: 'metrics.parquet',
    flag: {
      name: 'parquet',
      kind: 'switch',
      help: 'also write requests.parquet into the result folder',
      group: 'load',
    },
  },
  charts: {
    doc: 'draw charts/ and report.html when the run ends (off: bench_result.json, summary.md and the exports only; `llmbench report DIR` draws them later)',
    at: ['run', 'charts'],
    schema: bool,
    json: 'bench.charts',
    toml: 'metrics.charts',
    flag: {
      name: 'no-charts',
      kind: 'negated',
      help: 'do not draw charts/ and report.html at the end (`llmbench report DIR` draws them)',
      group: 'load',
    },
  },
  metrics_port: {
    doc: "serve the client's live metrics for Prometheus on this port during the run (off when unset)",
    at: ['run', 'metrics_port'],
    schema: port,
    json: 'bench.metrics_port',
    toml: 'metrics.live_port',
    flag: {
      name: 'metrics-port',
      kind: 'number',
      value: 'PORT',
      help: "serve the client's live metrics at http://HOST:PORT/metrics during the run",
      group: 'load',
    },
  },
  metrics_host: {
    doc: 'the address the live metrics endpoint binds; 0.0.0.0 exposes it to the network',
    at: ['run', 'metrics_host'],
    schema: () => nonEmptyText('a host name or IP address'),
    json: 'bench.metrics_host',
    toml: 'metrics.live_host',
    flag: {
      name: 'metrics-host',
      kind: 'string',
      value: 'HOST',
      help: 'the address --metrics-port binds',
      group: 'load',
    },
  },
  preflight: {
    at: ['run', 'preflight'],
    schema: bool,
    flag: {
      name: 'no-preflight',
      kind: 'negated',
      help: 'skip the one-request check before the first level',
      group: 'load',
    },
  },
  keepalive: {
    doc: 'reuse connections between requests; false = a new one per request',
    at: ['client', 'keepalive'],
    schema: bool,
    json: 'llm.keepalive',
    toml: 'client.keepalive',
    flag: {
      name: 'no-keepalive',
      kind: 'negated',
      help: 'open a new connection for every request',
      group: 'load',
    },
  },
  proxy: {
    doc: 'send through the proxy HTTP_PROXY/HTTPS_PROXY name (NO_PROXY honoured); false = connect directly',
    at: ['client', 'proxy'],
    schema: bool,
    json: 'llm.proxy',
    toml: 'client.proxy',
    flag: {
      name: 'no-proxy',
      kind: 'negated',
      help: 'ignore HTTP_PROXY, HTTPS_PROXY and NO_PROXY: connect to the server directly',
      group: 'load',
    },
  },
} as const satisfies Record<string, Setting>

export type SettingId = keyof typeof SETTINGS

/** Values given as CLI flags, keyed like SETTINGS; each one present overrides the same setting from any file. */
export type ConfigFlags = {
  [K in SettingId as (typeof SETTINGS)[K] extends { flag: FlagDecl }
    ? K
    : never]?: (typeof SETTINGS)[K] extends {
    flag: { kind: infer Kind extends FlagKind }
  }
    ? FlagValues[Kind]
    : never
}

/** --header's "Name: value" lines or a file's table → one table, names in lower case. */
function headerRecord(value: string[] | Record<string, string>): Record<string, string> {
  if (!Array.isArray(value)) return normalizeHeaders(value)
  const table: Record<string, string> = {}
  for (const line of value) {
    const parts = splitHeaderLine(line)
    if (parts !== null) table[parts[0]] = parts[1]
  }
  return normalizeHeaders(table)
}

/** A length's text or count, already validated by its schema: parseLength cannot fail on it. */
function parseValidLength(value: number | string): unknown {
  return parseLength(value)
}
