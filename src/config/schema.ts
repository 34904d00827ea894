/**
 * The schema leaves, one per kind of value, from which the settings table (settings.ts) builds the
 * schemas of the two config files as users write them (docs/configuration.md) and of the flags; and the
 * translation of zod issues into ConfigIssues a human can act on.
 *
 * Every leaf schema carries one "expected ..." phrase as its error, used for all of its failures
 * (wrong type, not an integer, out of range), so the user reads what a valid value looks like instead of
 * zod's internal vocabulary. The found value is taken from the raw data, not from zod, so it is shown
 * exactly as written.
 */

import { closestName } from '../closest-name.js'
import { describeValue } from '../describe-value.js'
import { measureOf } from '../metrics/measures.js'
import { parsePrecisionKey } from '../metrics/precision-key.js'
import { parseSloKey } from '../metrics/slo.js'
import { PROTOCOLS } from '../protocols/names.js'
import { formatPath, type PathStyle, valueAt } from '../schema-issue.js'
import { LENGTH_SYNTAX, parseLength } from '../workload/lengths.js'
import { AUDIO_SYNTAX, parseAudioSpec } from '../workload/prompt-audio-set.js'
import { IMAGES_SYNTAX, parseImageSpec } from '../workload/prompt-image-set.js'
import { z } from '../zod.js'
import { AUTH_MODES } from './auth-mode.js'
import { CACHE_RESET_MODES } from './cache-reset-mode.js'
import type { ConfigIssue } from './errors.js'
import { floorsExpected, GATES_EXPECTED, readFloors, readGates } from './gate-thresholds.js'
import { headerNameProblem, headerValueSendable, splitHeaderLine } from './headers.js'
import { PAIRED_MODES } from './paired-mode.js'
import { maskUrlSecrets } from './url.js'

// ---------------------------------------------------------------------------------------------------
// Leaf schemas
// ---------------------------------------------------------------------------------------------------

/** The zod `error` option: the phrase that follows "expected" in the message. */
export const expect = (phrase: string) => ({ error: phrase })

/**
 * Every count a user gives is bounded: `--repeat 1e9` was accepted and planned "about 212292 h"
 * (issue 36). The default bound is far above any run that ends; a setting with a tighter sane
 * range passes its own.
 */
export function positiveInt(max = 10_000_000) {
  const e = expect('a positive integer')
  return z
    .number(e)
    .int(e)
    .min(1, e)
    .max(max, expect(`a positive integer, at most ${max}`))
}

export function nonNegativeInt() {
  const e = expect('a non-negative integer')
  return z.number(e).int(e).min(0, e)
}

/**
 * A week: every duration becomes a timer, and a timer past 2^31 ms (24.8 days) fires at once, so
 * `--timeout 1e308` timed every request out "within Infinity s" (issue 36).
 */
export const MAX_SECONDS = 604_800

export function positiveSeconds() {
  const e = expect('a positive number of seconds')
  return z
    .number(e)
    .gt(0, e)
    .max(MAX_SECONDS, expect(`a positive number of seconds, at most ${MAX_SECONDS} (a week)`))
}

/** Worker threads: a positive integer or "auto". */
export function workers() {
  const e = expect('a positive integer or "auto"')
  return z.union([positiveInt(), z.literal('auto')], e)
}

/** SLO thresholds: { ttft_p95: 800, ... }; keys name a metric and a percentile. */
export function sloTable() {
  const key = expect('an SLO key like ttft_p95, tpot_p99, e2e_p50 or fluidity_p90')
  const value = expect('a positive number of milliseconds (fluidity: an index above 0 and at most 1)')
  return z
    .record(
      z.string(key).refine((text) => typeof parseSloKey(text) !== 'string', key),
      z.number(value).gt(0, value),
      {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'an SLO key like ttft_p95, tpot_p99, e2e_p50 or fluidity_p90'
            : 'a table of SLO thresholds, such as { ttft_p95 = 800 }',
      },
    )
    .superRefine((table, context) => {
      for (const [name, threshold] of Object.entries(table)) {
        const parsed = parseSloKey(name)
        // An index (fluidity) is a share of tokens on time: at most 1.
        if (typeof parsed !== 'string' && measureOf(parsed.metric)?.unit === 'index' && threshold > 1)
          context.addIssue({
            code: 'custom',
            path: [name],
            message: 'a fluidity index above 0 and at most 1, such as 0.9',
          })
      }
    })
}

/** --precision: figure → relative half-width of its 95% interval, in percent (metrics/precision-key.ts). */
export function precisionTable() {
  const key = expect('a figure like ttft_p95, tpot_p50, e2e_p99 or tput')
  const value = expect('a percent above 0 and at most 100, such as 5 or "5%"')
  return z.record(
    z.string(key).refine((text) => typeof parsePrecisionKey(text) !== 'string', key),
    z.number(value).gt(0, value).max(100, value),
    {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'a figure like ttft_p95, tpot_p50, e2e_p99 or tput'
          : 'a table of precision targets in percent, such as { ttft_p95 = 5, tput = 3 }',
    },
  )
}

/** A token length: a count, or a distribution such as "normal(512, 64)" (see workload/lengths.ts). */
export function inputLength() {
  const e = expect(LENGTH_SYNTAX)
  return z.union([nonNegativeInt(), z.string(e).refine((text) => parseLength(text) !== null, e)], e)
}

/** "2x448x448": images per prompt and their size (workload/prompt-image-set.ts). */
export function imageSpec() {
  const e = expect(IMAGES_SYNTAX)
  return z.string(e).refine((text) => parseImageSpec(text) !== null, e)
}

/** "1x5": audio clips per prompt and their seconds (workload/prompt-audio-set.ts). */
export function audioSpec() {
  const e = expect(AUDIO_SYNTAX)
  return z.string(e).refine((text) => parseAudioSpec(text) !== null, e)
}

/** Like inputLength, but at least 1: max_tokens = 0 is refused by servers, and no output measures nothing. */
export function outputLength() {
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

export function rates() {
  const e = expect('a non-empty list of positive request rates per second, such as [1, 2, 4]')
  return z.array(z.number(e).gt(0, e).lte(100_000, e), e).min(1, e)
}

export function traceSpeeds() {
  const e = expect('a non-empty list of positive replay speeds, such as [1, 2, 4] (2 = twice as fast)')
  return z.array(z.number(e).gt(0, e).lte(10_000, e), e).min(1, e)
}

export function arrival() {
  const e = expect('"constant", "poisson" or "gamma"')
  return z.enum(['constant', 'poisson', 'gamma'], e)
}

export function positiveNumber(what: string) {
  const e = expect(what)
  return z.number(e).gt(0, e)
}

/** A success rate in percent: 90 means 90%, 0 turns the check off. */
export function successRatePercent() {
  const e = expect('a percentage from 0 to 100, such as 90')
  return z.number(e).min(0, e).max(100, e)
}

export function nonNegativeSeconds() {
  const e = expect('a number of seconds, 0 or more')
  return z
    .number(e)
    .min(0, e)
    .max(MAX_SECONDS, expect(`a number of seconds, at most ${MAX_SECONDS} (a week)`))
}

export function nonEmptyText(what: string) {
  const e = expect(what)
  return z.string(e).regex(/\S/, e)
}

export function price(kind: 'input' | 'output') {
  const e = expect(`a price per million ${kind} tokens, 0 or more`)
  return z.number(e).min(0, e)
}

/** A share of requests, 0 to 1 (0 = none). */
export function share() {
  const e = expect('a share of requests from 0 to 1, such as 0.2')
  return z.number(e).min(0, e).max(1, e)
}

/**
 * When a cancelled request is aborted: "first" (at its first token) or after N token-bearing events.
 * Files may write the count as a number; the flag's text is turned into one (cancelAfterEvents).
 */
export function cancelAfter() {
  const e = expect('"first" or a positive integer of tokens, such as 16')
  return z.union([z.literal('first'), positiveInt(1_000_000)], e)
}

/** --cancel-after's text: "first" or a count of tokens, made a number by the setting's convert. */
export function cancelAfterFlag() {
  const e = expect('first or a positive integer of tokens, such as 16')
  return z.union([z.literal('first'), z.string(e).regex(/^[1-9][0-9]{0,5}$/, e)], e)
}

export function bool() {
  return z.boolean(expect('true or false'))
}

export function levels() {
  const e = expect('a non-empty list of positive integers, such as [1, 4, 8]')
  return z.array(positiveInt(), e).min(1, e)
}

export function percentiles() {
  const item = expect('a percentile greater than 0 and at most 100')
  const list = expect('a non-empty list of percentiles, such as [50, 95, 99]')
  return z.array(z.number(item).gt(0, item).lte(100, item), list).min(1, list)
}

function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false
  const url = new URL(s)
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
}

export function baseUrl() {
  const e = expect('an http(s) URL, such as "https://host/v1"')
  return z.string(e).refine(isHttpUrl, e)
}

/**
 * More endpoints beside base_url (several endpoints in one run), possibly none: each a plain URL
 * (sent the run's key and headers) or an entry naming its own, { url, api_key_env, headers,
 * env_headers }; URLs without user:password@ (a key goes in the endpoint's own api_key_env).
 */
export function moreBaseUrls() {
  const e = expect(
    'a list of http(s) URLs without user:password@ or of { url, api_key_env, headers, env_headers } entries, such as ["http://host-b:8000/v1"]',
  )
  const urlPhrase = expect('an http(s) URL without user:password@, such as "http://host-b:8000/v1"')
  const plain = (s: string): boolean =>
    isHttpUrl(s) && new URL(s).username === '' && new URL(s).password === ''
  const entry = z.strictObject(
    {
      url: z.string(urlPhrase).refine(plain, urlPhrase),
      api_key_env: envVarName().optional(),
      headers: headerTable().optional(),
      env_headers: envHeaderTable().optional(),
    },
    expect('an endpoint entry { url, api_key_env, headers, env_headers }'),
  )
  return z.array(z.union([z.string(e).refine(plain, e), entry], e), e)
}

/** More models beside model: ids as the servers list them, possibly none. */
export function moreModels() {
  const e = expect('a list of model ids, such as ["my-lora-adapter"]')
  return z.array(z.string(e).regex(/\S/, e), e)
}

/** Traffic weights, one per endpoint or model in order; [] = equal shares. */
export function splitWeights() {
  const e = expect('a list of positive whole numbers, one per endpoint or model in order, such as [3, 1]')
  return z.array(positiveInt(), e).max(1000, e)
}

/** Metrics URLs to scrape: "auto" (the target's /metrics) or http(s) URLs; at least one. */
export function metricsUrls() {
  const e = expect(
    'a non-empty list of "auto" or http(s) URLs, such as ["auto", "http://gpu-host:9400/metrics"]',
  )
  return z
    .array(
      z.string(e).refine((url) => url === 'auto' || isHttpUrl(url), e),
      e,
    )
    .min(1, e)
}

export function endpoint() {
  const e = expect('a path starting with "/", such as "/v1/chat/completions"')
  return z.string(e).startsWith('/', e)
}

export function protocol() {
  const e = expect(`one of ${PROTOCOLS.join(', ')}`)
  return z.enum(PROTOCOLS, e)
}

export function modelId() {
  const e = expect('a non-empty model id')
  return z.string(e).regex(/\S/, e)
}

/** Only the variable's name belongs in a config file; the key itself must stay in the environment. */
export function envVarName() {
  const e = expect('the name of an environment variable (letters, digits, "_"), not the key itself')
  return z.string(e).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, e)
}

const HEADER_VALUE = 'a header value without control characters or characters beyond Latin-1'

/** `headers` in the files: { "X-Name": "value" }; names and values checked as undici will. */
export function headerTable() {
  return z.record(
    z.string().refine((name) => headerNameProblem(name) === null, {
      error: (issue) => headerNameProblem(String(issue.input)) ?? 'a header name',
    }),
    z.string(expect(HEADER_VALUE)).refine(headerValueSendable, expect(HEADER_VALUE)),
    {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? (headerNameProblem(String(issue.input)) ?? 'a header name')
          : 'a table of header names and values, such as { "X-Team" = "bench" }',
    },
  )
}

/** `env_headers`: { "X-Name": "ENV_VAR" }. */
export function envHeaderTable() {
  return z.record(headerTable().keyType, envVarName(), {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? 'a header name'
        : 'a table of header names and environment variable names, such as { "X-Gateway-Key" = "GATEWAY_KEY" }',
  })
}

/** Where another tool's config file keeps the key (set by the loader, never written by users). */
export function keyFileRef() {
  return z.object({ file: z.string(), path: z.array(z.string()) }).nullable()
}

/** --header, repeatable: each "Name: value". */
export function headerLines() {
  const e = expect('"Name: value" with a valid header name and a value a header can carry')
  return z.array(
    z.string(e).refine((line) => {
      const parts = splitHeaderLine(line)
      return parts !== null && headerNameProblem(parts[0]) === null && headerValueSendable(parts[1])
    }, e),
    e,
  )
}

/** Where the key goes: auto, bearer, api-key (Azure OpenAI), x-api-key (Anthropic) or none. */
export function authMode() {
  return z.enum(AUTH_MODES, expect(AUTH_MODES.map((mode) => `"${mode}"`).join(', ')))
}

/** output_json names the summary inside the result folder; a path would let it escape the folder. */
export function plainFileName() {
  const e = expect('a plain file name without slashes, such as "bench_result.json"')
  return z
    .string(e)
    .regex(/^[^/\\]+$/, e)
    .refine((name) => name !== '.' && name !== '..', e)
}

/** --reset-cache and reset_cache: when the server's prefix cache is reset (src/run/level/cache-reset.ts). */
export function cacheResetMode() {
  return z.enum(CACHE_RESET_MODES, expect(CACHE_RESET_MODES.map((mode) => `"${mode}"`).join(', ')))
}

/** run --max-regression: the gate's thresholds as `compare` reads them (gate-thresholds.ts). */
export function gateThresholds() {
  const e = expect(GATES_EXPECTED)
  return z.string(e).refine((text) => typeof readGates(text) !== 'string', e)
}

/** run --min-change: the gate's absolute floors as `compare` reads them (gate-thresholds.ts). */
export function gateFloors() {
  const e = expect(floorsExpected())
  return z.string(e).refine((text) => typeof readFloors(text) !== 'string', e)
}

/** --paired-mode and paired_mode: how a paired run loads its two targets (src/config/paired-mode.ts). */
export function pairedMode() {
  return z.enum(PAIRED_MODES, expect(PAIRED_MODES.map((mode) => `"${mode}"`).join(', ')))
}

/** config.toml's spelling of the mode. */
export function loadMode() {
  return z.enum(['concurrency_gradient', 'request_rate'], expect('"concurrency_gradient" or "request_rate"'))
}

/** settings.json's spelling of the mode. */
export function settingsMode() {
  return z.enum(['concurrency', 'request_rate'], expect('"concurrency" or "request_rate"'))
}

/** --mode: the flag's spelling (concurrency|rate, docs/commands.md) and the config files' (request_rate). */
export function flagMode() {
  return z.enum(['concurrency', 'rate', 'request_rate'], expect('concurrency or rate'))
}

export function folderPath() {
  return z.string(expect('a folder path')).min(1, expect('a folder path'))
}

// ---------------------------------------------------------------------------------------------------
// Zod issues -> ConfigIssues
// ---------------------------------------------------------------------------------------------------

export type { PathStyle } from '../schema-issue.js'

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
  const inner = matchedUnionBranch(issue)
  if (inner !== null) return inner.flatMap((nested) => toConfigIssues(nested, schema, data, file, style))
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
 * The issues of the one branch of a union whose type the value had, when they are inside the value
 * (a plain URL or an endpoint entry: an entry's bad header is named by its own path), with the
 * union's path in front; null otherwise, and the union's own phrase says what was expected.
 */
function matchedUnionBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] | null {
  if (issue.code !== 'invalid_union') return null
  const nested = issue.errors.filter((branch) => branch.every((inner) => inner.path.length > 0))
  if (nested.length !== 1) return null
  return (nested[0] as z.core.$ZodIssue[]).map((inner) => ({
    ...inner,
    path: [...issue.path, ...inner.path],
  }))
}

/**
 * A mistyped api_key_env may be the API key itself pasted in, a base_url may carry credentials;
 * docs/configuration.md "The API key": the key never reaches the terminal.
 */
function describeFound(found: unknown, path: readonly PropertyKey[]): string {
  if ((path.at(-1) === 'api_key_env' || path.at(-1) === 'env_key') && typeof found === 'string') {
    return 'a value that is not a variable name (not shown: it may be the key itself)'
  }
  // A key stored in another tool's file (env.ANTHROPIC_AUTH_TOKEN, experimental_bearer_token).
  if (/(auth_token|api_key|bearer_token|secret|password)$/i.test(String(path.at(-1) ?? '')))
    return 'a value (not shown: it may be a key)'
  // A header's value may be a credential: show the name only.
  if (path.some((part) => part === 'headers' || part === 'header' || part === 'env_headers'))
    return describeHeader(found, path)
  // A URL that does not parse may still carry user:password@ or a key in its query.
  const urlKey = path.findLast((part) => typeof part === 'string')
  // An endpoint entry's url: { url = "...", api_key_env = ... } in more_base_urls.
  const inMoreBaseUrls = urlKey === 'url' && path.includes('more_base_urls')
  if ((urlKey === 'base_url' || urlKey === 'more_base_urls' || inMoreBaseUrls) && typeof found === 'string')
    return describeValue(maskUrlSecrets(found))
  return describeValue(found)
}

function describeHeader(found: unknown, path: readonly PropertyKey[]): string {
  if (typeof found !== 'string') return describeValue(found)
  // A file's table is keyed by the name; a flag's list holds "Name: value" lines.
  const name = typeof path.at(-1) === 'string' ? String(path.at(-1)) : (splitHeaderLine(found)?.[0] ?? '')
  return name === ''
    ? 'a value without "Name:" (not shown)'
    : `a value for ${JSON.stringify(name)} (not shown)`
}

function unknownKeyMessage(key: string, known: string[]): string {
  const guess = closestName(key, known)
  const hint = guess ? ` (did you mean "${guess}"?)` : ''
  const expected = known.length > 0 ? `a known key (${known.join(', ')})` : 'no keys here'
  return `expected ${expected}, got unknown key ${JSON.stringify(key)}${hint}`
}

/** The keys the schema accepts at `path` (for "did you mean" and the list of valid keys). */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let cur: z.core.$ZodType | undefined = schema
  for (const seg of [...path, null]) {
    while (cur instanceof z.ZodOptional) cur = cur.unwrap()
    // A list's item (more_base_urls[1]), and of a union the table form: an endpoint entry's keys.
    if (cur instanceof z.ZodArray && typeof seg === 'number') {
      cur = cur.element
      continue
    }
    if (cur instanceof z.ZodUnion) cur = cur.options.find((option) => option instanceof z.ZodObject)
    if (!(cur instanceof z.ZodObject)) return []
    const shape: Record<string, z.core.$ZodType> = cur.shape
    if (seg === null) return Object.keys(shape)
    cur = shape[String(seg)]
  }
  return []
}

export function port() {
  const e = expect('a TCP port, an integer from 0 (any free port) to 65535')
  return z.number(e).int(e).min(0, e).max(65535, e)
}
