/**
 * Zod schemas for the two config files exactly as users write them (SPEC "Configuration"), plus the CLI
 * flags, and the translation of zod issues into ConfigIssues a human can act on.
 *
 * Every leaf schema carries one "expected ..." phrase as its error, used for all of its failures
 * (wrong type, not an integer, out of range), so the user reads what a valid value looks like instead of
 * zod's internal vocabulary. The found value is taken from the raw data, not from zod, so it is shown
 * exactly as written.
 */

import { describeValue } from '../describe-value.js'
import { parseSloKey } from '../metrics/slo.js'
import { LENGTH_SYNTAX, parseLength } from '../workload/lengths.js'
import type { ConfigIssue } from './errors.js'
import { maskUrlSecrets } from './url.js'
import { z } from './zod.js'

// ---------------------------------------------------------------------------------------------------
// Leaf schemas
// ---------------------------------------------------------------------------------------------------

/** The zod `error` option: the phrase that follows "expected" in the message. */
const expect = (phrase: string) => ({ error: phrase })

function positiveInt() {
  const e = expect('a positive integer')
  return z.number(e).int(e).min(1, e)
}

function nonNegativeInt() {
  const e = expect('a non-negative integer')
  return z.number(e).int(e).min(0, e)
}

function positiveSeconds() {
  const e = expect('a positive number of seconds')
  return z.number(e).gt(0, e)
}

/** Worker threads: a positive integer or "auto". */
function workers() {
  const e = expect('a positive integer or "auto"')
  return z.union([positiveInt(), z.literal('auto')], e)
}

/** SLO thresholds: { ttft_p95_ms: 800, ... }; keys name a metric and a percentile. */
function sloTable() {
  const key = expect('an SLO key like ttft_p95_ms, tpot_p99_ms or e2e_p50_ms')
  const value = expect('a positive number of milliseconds')
  return z.record(
    z.string(key).refine((text) => typeof parseSloKey(text) !== 'string', key),
    z.number(value).gt(0, value),
    {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'an SLO key like ttft_p95_ms, tpot_p99_ms or e2e_p50_ms'
          : 'a table of SLO thresholds, such as { ttft_p95_ms = 800 }',
    },
  )
}

/** A token length: a count, or a distribution such as "normal(512, 64)" (see workload/lengths.ts). */
function inputLength() {
  const e = expect(LENGTH_SYNTAX)
  return z.union([nonNegativeInt(), z.string(e).refine((text) => parseLength(text) !== null, e)], e)
}

/** Like inputLength, but at least 1: max_tokens = 0 is refused by servers, and no output measures nothing. */
function outputLength() {
  const e = expect(`${LENGTH_SYNTAX}; at least 1`)
  return z.union(
    [
      positiveInt(),
      z.string(e).refine((text) => {
        const spec = parseLength(text)
        return spec !== null && !(spec.kind === 'fixed' && spec.value < 1)
      }, e),
    ],
    e,
  )
}

function rates() {
  const e = expect('a non-empty list of positive request rates per second, such as [1, 2, 4]')
  return z.array(z.number(e).gt(0, e).lte(100_000, e), e).min(1, e)
}

function arrival() {
  const e = expect('"constant", "poisson" or "gamma"')
  return z.enum(['constant', 'poisson', 'gamma'], e)
}

function positiveNumber(what: string) {
  const e = expect(what)
  return z.number(e).gt(0, e)
}

/** A success rate in percent: 90 means 90%, 0 turns the check off. */
function successRatePercent() {
  const e = expect('a percentage from 0 to 100, such as 90')
  return z.number(e).min(0, e).max(100, e)
}

function nonNegativeSeconds() {
  const e = expect('a number of seconds, 0 or more')
  return z.number(e).min(0, e)
}

function nonEmptyText(what: string) {
  const e = expect(what)
  return z.string(e).regex(/\S/, e)
}

function price(kind: 'input' | 'output') {
  const e = expect(`a price per million ${kind} tokens, 0 or more`)
  return z.number(e).min(0, e)
}

function pricing() {
  return section(
    {
      input_per_mtok: price('input').optional(),
      output_per_mtok: price('output').optional(),
      currency: nonEmptyText('a currency name such as "USD"').optional(),
      max_cost: positiveNumber('a positive amount in the pricing currency').optional(),
    },
    'a table ([pricing]) with input_per_mtok, output_per_mtok, currency and/or max_cost',
  )
}

/** Keys shared by settings.json's bench section, config.toml's [workload] table and the flags. */
function workloadKeys() {
  return {
    dataset: nonEmptyText('a path to a JSONL or ShareGPT JSON file').optional(),
    profile: nonEmptyText('"chat", "rag", "codegen" or a path to a profile file').optional(),
    tokenizer: nonEmptyText('"o200k", "cl100k" or a path to a tokenizer.json').optional(),
    shared_prefix: nonNegativeInt().optional(),
    ignore_eos: bool().optional(),
    calibrate: bool().optional(),
    seed: nonNegativeInt().optional(),
  }
}

/** Open-loop and window keys shared by settings.json's bench section, [load] and the flags. */
function loadKeys() {
  return {
    rates: rates().optional(),
    arrival: arrival().optional(),
    burstiness: positiveNumber('a positive gamma shape (1 = Poisson, below 1 = burstier)').optional(),
    max_in_flight: positiveInt().optional(),
    warmup_seconds: nonNegativeSeconds().optional(),
    cooldown_seconds: nonNegativeSeconds().optional(),
  }
}

function bool() {
  return z.boolean(expect('true or false'))
}

function levels() {
  const e = expect('a non-empty list of positive integers, such as [1, 4, 8]')
  return z.array(positiveInt(), e).min(1, e)
}

function percentiles() {
  const item = expect('a percentile greater than 0 and at most 100')
  const list = expect('a non-empty list of percentiles, such as [50, 95, 99]')
  return z.array(z.number(item).gt(0, item).lte(100, item), list).min(1, list)
}

function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false
  const url = new URL(s)
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
}

function baseUrl() {
  const e = expect('an http(s) URL, such as "https://host/v1"')
  return z.string(e).refine(isHttpUrl, e)
}

function endpoint() {
  const e = expect('a path starting with "/", such as "/v1/chat/completions"')
  return z.string(e).startsWith('/', e)
}

function modelId() {
  const e = expect('a non-empty model id')
  return z.string(e).regex(/\S/, e)
}

/** Only the variable's name belongs in a config file; the key itself must stay in the environment. */
function envVarName() {
  const e = expect('the name of an environment variable (letters, digits, "_"), not the key itself')
  return z.string(e).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, e)
}

/** output_json names the summary inside the result folder; a path would let it escape the folder. */
function plainFileName() {
  const e = expect('a plain file name without slashes, such as "bench_result.json"')
  return z
    .string(e)
    .regex(/^[^/\\]+$/, e)
    .refine((name) => name !== '.' && name !== '..', e)
}

/** A strict section: unknown keys are errors (reported per key by toConfigIssues). */
function section<S extends z.core.$ZodLooseShape>(shape: S, expected: string) {
  return z.strictObject(shape, expect(expected)).optional()
}

// ---------------------------------------------------------------------------------------------------
// File and flag schemas
// ---------------------------------------------------------------------------------------------------

/** settings.json. Every key is optional (a partial file is fine); `llm.endpoint` and `bench.duration_per_level` are extensions. */
export const SettingsJsonSchema = z.strictObject(
  {
    llm: section(
      {
        base_url: baseUrl().optional(),
        endpoint: endpoint().optional(),
        api_key_env: envVarName().optional(),
        model: modelId().optional(),
        timeout_seconds: positiveSeconds().optional(),
        stream: bool().optional(),
        keepalive: bool().optional(),
      },
      'an object (the "llm" section)',
    ),
    bench: section(
      {
        concurrency_levels: levels().optional(),
        requests_per_level: positiveInt().optional(),
        duration_per_level: positiveSeconds().optional(),
        warmup_requests: nonNegativeInt().optional(),
        input_tokens: inputLength().optional(),
        output_tokens: outputLength().optional(),
        percentiles: percentiles().optional(),
        slo: sloTable().optional(),
        mode: settingsMode().optional(),
        ...loadKeys(),
        ...workloadKeys(),
      },
      'an object (the "bench" section)',
    ),
    pricing: pricing(),
  },
  expect('a JSON object with "llm" and/or "bench" sections'),
)
export type SettingsJson = z.infer<typeof SettingsJsonSchema>

function loadMode() {
  return z.enum(['concurrency_gradient', 'request_rate'], expect('"concurrency_gradient" or "request_rate"'))
}

function settingsMode() {
  return z.enum(['concurrency', 'request_rate'], expect('"concurrency" or "request_rate"'))
}

/** --mode: SPEC's spelling (concurrency|rate) and the config files' (request_rate). */
function flagMode() {
  return z.enum(['concurrency', 'rate', 'request_rate'], expect('concurrency or rate'))
}

/** config.toml. Every key is optional; extensions: target.api_key_env, load.requests_per_level, load.warmup_requests, load.input_tokens, metrics.percentiles. */
export const ConfigTomlSchema = z.strictObject(
  {
    target: section(
      {
        base_url: baseUrl().optional(),
        endpoint: endpoint().optional(),
        model: modelId().optional(),
        api_key_env: envVarName().optional(),
      },
      'a table ([target])',
    ),
    load: section(
      {
        mode: loadMode().optional(),
        levels: levels().optional(),
        duration_per_level: positiveSeconds().optional(),
        requests_per_level: positiveInt().optional(),
        max_tokens: outputLength().optional(),
        warmup_requests: nonNegativeInt().optional(),
        input_tokens: inputLength().optional(),
        ...loadKeys(),
      },
      'a table ([load])',
    ),
    workload: section(
      {
        input_tokens: inputLength().optional(),
        output_tokens: outputLength().optional(),
        ...workloadKeys(),
      },
      'a table ([workload])',
    ),
    pricing: pricing(),
    metrics: section(
      {
        record_ttft: bool().optional(),
        record_tpot: bool().optional(),
        record_throughput: bool().optional(),
        output_json: plainFileName().optional(),
        percentiles: percentiles().optional(),
        min_success_rate: successRatePercent().optional(),
      },
      'a table ([metrics])',
    ),
    client: section(
      {
        stream: bool().optional(),
        timeout: positiveSeconds().optional(),
        connect_timeout: positiveSeconds().optional(),
        first_token_timeout: positiveSeconds().optional(),
        idle_timeout: positiveSeconds().optional(),
        retry: nonNegativeInt().optional(),
        keepalive: bool().optional(),
        workers: workers().optional(),
      },
      'a table ([client])',
    ),
    slo: sloTable().optional(),
  },
  expect(
    'a TOML document with [target], [load], [workload], [metrics], [client], [slo] and/or [pricing] tables',
  ),
)
export type ConfigToml = z.infer<typeof ConfigTomlSchema>

/**
 * CLI flags. Not strict: ConfigFlags is typed at compile time, and an extra property from the argument
 * parser is a programming slip, not something the user could fix, so it is ignored rather than reported.
 */
export const FlagsSchema = z.object({
  base_url: baseUrl().optional(),
  endpoint: endpoint().optional(),
  model: modelId().optional(),
  api_key_env: envVarName().optional(),
  levels: levels().optional(),
  requests: positiveInt().optional(),
  duration: positiveSeconds().optional(),
  warmup: nonNegativeInt().optional(),
  input_tokens: inputLength().optional(),
  output_tokens: outputLength().optional(),
  mode: flagMode().optional(),
  ...loadKeys(),
  ...workloadKeys(),
  max_cost: positiveNumber('a positive amount in the pricing currency').optional(),
  timeout: positiveSeconds().optional(),
  connect_timeout: positiveSeconds().optional(),
  first_token_timeout: positiveSeconds().optional(),
  idle_timeout: positiveSeconds().optional(),
  retry: nonNegativeInt().optional(),
  keepalive: bool().optional(),
  out: z.string(expect('a folder path')).min(1, expect('a folder path')).optional(),
  preflight: bool().optional(),
  stream: bool().optional(),
  workers: workers().optional(),
  slo: sloTable().optional(),
  fail_on_slo: bool().optional(),
  min_success_rate: successRatePercent().optional(),
  refine: bool().optional(),
  history: z.string(expect('a folder path')).min(1, expect('a folder path')).optional(),
})

// ---------------------------------------------------------------------------------------------------
// Zod issues -> ConfigIssues
// ---------------------------------------------------------------------------------------------------

/** How key paths are spelled: as file keys ("bench.concurrency_levels[2]") or as flags ("--levels[2]"). */
export type PathStyle = 'keys' | 'flags'

export type Validation<T> = { ok: true; value: T } | { ok: false; issues: ConfigIssue[] }

/** Validates `data` and, on failure, returns every problem as a ConfigIssue naming `file`. */
export function validate<S extends z.ZodType>(
  schema: S,
  data: unknown,
  file: string,
  style: PathStyle = 'keys',
): Validation<z.infer<S>> {
  const result = schema.safeParse(data)
  if (result.success) return { ok: true, value: result.data }
  return {
    ok: false,
    issues: result.error.issues.flatMap((issue) => toConfigIssues(issue, schema, data, file, style)),
  }
}

function toConfigIssues(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  data: unknown,
  file: string,
  style: PathStyle,
): ConfigIssue[] {
  if (issue.code === 'unrecognized_keys') {
    // zod reports all unknown keys of one object together; the user needs each one's full path.
    const known = knownKeysAt(schema, issue.path)
    return issue.keys.map((key) => ({
      file,
      path: formatPath([...issue.path, key], style),
      message: unknownKeyMessage(key, known),
    }))
  }
  const found = valueAt(data, issue.path)
  return [
    {
      file,
      path: formatPath(issue.path, style),
      message: `expected ${issue.message}, got ${describeFound(found, issue.path)}`,
    },
  ]
}

/**
 * A mistyped api_key_env may be the API key itself pasted in, a base_url may carry credentials; SPEC:
 * the key never reaches the terminal.
 */
function describeFound(found: unknown, path: readonly PropertyKey[]): string {
  if (path.at(-1) === 'api_key_env' && typeof found === 'string') {
    return 'a value that is not a variable name (not shown: it may be the key itself)'
  }
  // A URL that does not parse may still carry user:password@ or a key in its query.
  if (path.at(-1) === 'base_url' && typeof found === 'string') return describeValue(maskUrlSecrets(found))
  return describeValue(found)
}

function unknownKeyMessage(key: string, known: string[]): string {
  const guess = closestKey(key, known)
  const hint = guess ? ` (did you mean "${guess}"?)` : ''
  const expected = known.length > 0 ? `a known key (${known.join(', ')})` : 'no keys here'
  return `expected ${expected}, got unknown key ${JSON.stringify(key)}${hint}`
}

/** Formats a zod path: ["bench", "concurrency_levels", 2] -> "bench.concurrency_levels[2]". */
export function formatPath(path: readonly PropertyKey[], style: PathStyle = 'keys'): string {
  let out = ''
  for (const [i, seg] of path.entries()) {
    if (typeof seg === 'number') out += `[${seg}]`
    else if (i === 0 && style === 'flags') out += `--${String(seg).replaceAll('_', '-')}`
    else if (typeof seg === 'string' && /^[A-Za-z_][\w-]*$/.test(seg)) out += i === 0 ? seg : `.${seg}`
    else out += `[${JSON.stringify(String(seg))}]`
  }
  return out
}

/** The raw value at a zod path, so messages show what the user actually wrote. */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = data
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined
    cur = Reflect.get(cur, seg)
  }
  return cur
}

/** The keys the schema accepts at `path` (for "did you mean" and the list of valid keys). */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let cur: z.core.$ZodType | undefined = schema
  for (const seg of [...path, null]) {
    while (cur instanceof z.ZodOptional) cur = cur.unwrap()
    if (!(cur instanceof z.ZodObject)) return []
    const shape: Record<string, z.core.$ZodType> = cur.shape
    if (seg === null) return Object.keys(shape)
    cur = shape[String(seg)]
  }
  return []
}

/** A likely intended key: a small edit away ("modle"), or one containing the other ("timeout" / "timeout_seconds"). */
function closestKey(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase()
  return (
    known.find((k) => editDistance(lower, k) <= 2) ??
    known.find((k) => lower.length >= 3 && (k.includes(lower) || lower.includes(k)))
  )
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost))
    }
    prev = row
  }
  return prev[b.length] ?? 0
}
