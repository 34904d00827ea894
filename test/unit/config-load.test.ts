import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ConfigError, type ConfigIssue } from '../../src/config/errors.js'
import { DEFAULTS, loadRunConfig } from '../../src/config/load.js'
import { CONFIG_TOML_TEMPLATE, INIT_NOTES, SETTINGS_JSON_TEMPLATE } from '../../src/config/templates.js'
import type { ConfigFlags, RunConfig } from '../../src/config/types.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url))
const SETTINGS = join(FIXTURES, 'settings.json')
const TOML = join(FIXTURES, 'config.toml')
const broken = (name: string) => join(FIXTURES, 'broken', name)

/** Flags that satisfy the final checks, so a broken-file test sees only that file's issues. */
const TARGET: ConfigFlags = { base_url: 'https://flag-host/v1', model: 'flag-model' }

const tmp = mkdtempSync(join(tmpdir(), 'llmbench-config-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

/** Writes a temporary config file and returns its path. */
function tempFile(name: string, text: string): string {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}

function load(configFiles: string[], flags: ConfigFlags = {}): RunConfig {
  return loadRunConfig({ configFiles, flags })
}

/** The issues of the ConfigError that loading must throw. */
function issuesOf(configFiles: string[], flags: ConfigFlags = {}): ConfigIssue[] {
  try {
    load(configFiles, flags)
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`)
    return err.issues
  }
  assert.fail('expected loading to throw a ConfigError')
}

/** [file, path] of each issue, in order: the part of an issue the tests pin exactly. */
const where = (issues: ConfigIssue[]) => issues.map((i) => [i.file, i.path])

/** The one issue at `path`, failing if there is not exactly one. */
function issueAt(issues: ConfigIssue[], path: string): ConfigIssue {
  const found = issues.filter((i) => i.path === path)
  assert.equal(found.length, 1, `one issue at ${path} in ${JSON.stringify(issues, null, 2)}`)
  return found[0] as ConfigIssue
}

/**
 * DEFAULTS as docs/configuration.md lists them, written out once: the other expected configs below
 * are these plus what their sources set.
 */
const DOCUMENTED_DEFAULTS: RunConfig = {
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
    output_json: 'bench_result.json',
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
}

// The two example files of docs/configuration.md "Examples", as RunConfigs.
const FROM_SETTINGS: RunConfig = {
  ...DOCUMENTED_DEFAULTS,
  target: {
    ...DOCUMENTED_DEFAULTS.target,
    base_url: 'https://host/api',
    model: 'm',
    api_key_env: 'MY_API_KEY',
  },
  client: { ...DOCUMENTED_DEFAULTS.client, stream: true, timeout_s: 120 },
  load: {
    ...DOCUMENTED_DEFAULTS.load,
    levels: [1, 4, 8, 16, 32, 64],
    requests_per_level: 40,
    warmup_requests: 5,
  },
  workload: {
    ...DOCUMENTED_DEFAULTS.workload,
    input: { kind: 'fixed', value: 256 },
    output: { kind: 'fixed', value: 512 },
    input_tokens: 256,
    output_tokens: 512,
  },
  metrics: { ...DOCUMENTED_DEFAULTS.metrics, percentiles: [50, 95, 99] },
}

const FROM_TOML: RunConfig = {
  ...FROM_SETTINGS,
  target: { ...FROM_SETTINGS.target, api_key_env: 'OPENAI_API_KEY' },
  load: { ...FROM_SETTINGS.load, requests_per_level: null, duration_per_level_s: 30 },
}

// ---------------------------------------------------------------------------------------------------
// The examples of docs/configuration.md "Examples"
// ---------------------------------------------------------------------------------------------------

test('SPEC settings.json loads alone', () => {
  assert.deepEqual(load([SETTINGS]), FROM_SETTINGS)
})

test('SPEC config.toml loads alone', () => {
  assert.deepEqual(load([TOML]), FROM_TOML)
})

test('SPEC files together: config.toml wins (duration 30 over requests 40), settings.json fills the rest', () => {
  const expected: RunConfig = {
    ...FROM_TOML,
    target: { ...FROM_TOML.target, api_key_env: 'MY_API_KEY' },
  }
  assert.deepEqual(load([SETTINGS, TOML]), expected)
  // docs/configuration.md ranks the kinds, so the order of -c options does not change the result.
  assert.deepEqual(load([TOML, SETTINGS]), expected)
})

test("SPEC files together plus flags: flags win, and --requests replaces the files' duration", () => {
  const config = load([SETTINGS, TOML], { levels: [1, 2, 4], requests: 20 })
  assert.deepEqual(config.load, {
    ...FROM_SETTINGS.load,
    levels: [1, 2, 4],
    requests_per_level: 20,
    duration_per_level_s: null,
  })
  assert.equal(config.target.model, 'm')
  assert.equal(config.client.timeout_s, 120)
})

test('--precision and its ceilings map onto load, and asking for precision replaces an earlier timed level', () => {
  const config = load([SETTINGS, TOML], {
    precision: { ttft_p95: 5, tput: 3 },
    max_requests: 300,
    max_duration: 60,
  })
  assert.deepEqual(config.load.precision, { ttft_p95: 5, tput: 3 })
  assert.equal(config.load.max_requests_per_level, 300)
  assert.equal(config.load.max_duration_per_level_s, 60)
  // config.toml said duration 30: precision sizes levels by requests, the floor from settings.json.
  assert.equal(config.load.duration_per_level_s, null)
  assert.equal(config.load.requests_per_level, 40)
})

// ---------------------------------------------------------------------------------------------------
// Layering and mapping
// ---------------------------------------------------------------------------------------------------

test('every flag maps onto its RunConfig field', () => {
  // --max-cost needs prices, which only files give.
  const prices = tempFile('prices.toml', '[pricing]\ninput_per_mtok = 1\n')
  const config = load([SETTINGS, TOML, prices], {
    base_url: 'https://other/v1/',
    endpoint: '/v1/completions',
    protocol: 'completions',
    model: 'flag-model',
    api_key_env: 'OTHER_KEY',
    levels: [2],
    duration: 7.5,
    warmup: 0,
    input_tokens: 0,
    output_tokens: 'normal(64, 8)',
    timeout: 30,
    retry: 2,
    out: 'results/x',
    preflight: false,
    stream: false,
    workers: 3,
    mode: 'rate',
    rates: [0.5, 3],
    arrival: 'gamma',
    burstiness: 0.5,
    max_in_flight: 64,
    stagger: true,
    cancel_share: 0.25,
    cancel_after: '16',
    warmup_seconds: 2,
    cooldown_seconds: 1,
    control: false,
    repeat: 2,
    profile: 'rag',
    dataset: 'prompts.jsonl',
    tokenizer: 'cl100k',
    shared_prefix: 0,
    turns: 3,
    think_time: 1.5,
    ignore_eos: true,
    calibrate: false,
    seed: 9,
    max_cost: 5,
    min_success_rate: 75,
  })
  assert.deepEqual(config, {
    target: {
      ...DOCUMENTED_DEFAULTS.target,
      base_url: 'https://other/v1',
      endpoint: '/v1/completions',
      protocol: 'completions',
      model: 'flag-model',
      api_key_env: 'OTHER_KEY',
    },
    client: { ...DOCUMENTED_DEFAULTS.client, stream: false, timeout_s: 30, retry: 2 },
    load: {
      mode: 'request_rate',
      levels: [2],
      rates: [0.5, 3],
      arrival: 'gamma',
      burstiness: 0.5,
      max_in_flight: 64,
      stagger: true,
      cancel_share: 0.25,
      cancel_after: 16,
      ramp_s: null,
      requests_per_level: null,
      duration_per_level_s: 7.5,
      precision: null,
      max_requests_per_level: null,
      max_duration_per_level_s: null,
      warmup_requests: 0,
      warmup_s: 2,
      cooldown_s: 1,
      control: false,
      repeat: 2,
    },
    // The rag profile's lengths are overridden by the flags' own.
    workload: {
      ...DOCUMENTED_DEFAULTS.workload,
      input: { kind: 'fixed', value: 0 },
      output: { kind: 'normal', mean: 64, sd: 8 },
      input_tokens: 0,
      output_tokens: 64,
      dataset: 'prompts.jsonl',
      profile: 'rag',
      tokenizer: 'cl100k',
      shared_prefix: 0,
      turns: 3,
      think_time_s: 1.5,
      ignore_eos: true,
      calibrate: false,
      seed: 9,
    },
    pricing: { input_per_mtok: 1, output_per_mtok: 0, currency: 'USD' },
    metrics: { ...FROM_TOML.metrics, min_success_rate: 75 },
    server_metrics: DOCUMENTED_DEFAULTS.server_metrics,
    run: { ...DOCUMENTED_DEFAULTS.run, out_dir: 'results/x', preflight: false, workers: 3, max_cost: 5 },
  })
})

test('min_success_rate: a percentage from [metrics] or --min-success-rate, the flag winning', () => {
  const toml = tempFile('gate.toml', '[metrics]\nmin_success_rate = 50\n')
  assert.equal(load([toml], TARGET).metrics.min_success_rate, 50)
  assert.equal(load([toml], { ...TARGET, min_success_rate: 0 }).metrics.min_success_rate, 0)
  const bad = tempFile('bad-gate.toml', '[metrics]\nmin_success_rate = 0.9e3\n')
  assert.ok(
    issuesOf([bad], TARGET).some(
      (issue) => issue.path === 'metrics.min_success_rate' && /percentage from 0 to 100/.test(issue.message),
    ),
  )
})

test('workers: a positive integer or "auto", from [client] workers or --workers', () => {
  const toml = tempFile('workers.toml', '[client]\nworkers = 2\n')
  assert.equal(load([toml], TARGET).run.workers, 2)
  assert.equal(load([toml], { ...TARGET, workers: 'auto' }).run.workers, 'auto')
  const bad = tempFile('bad-workers.toml', '[client]\nworkers = "many"\n')
  const issues = issuesOf([bad], TARGET)
  assert.ok(
    issues.some(
      (issue) =>
        issue.path === 'client.workers' && /expected a positive integer or "auto"/.test(issue.message),
    ),
    JSON.stringify(issues),
  )
})

test('cancellation: a share from 0 to 1 and "first" or a count, from [load] or the flags, bad values named', () => {
  const toml = tempFile('cancel.toml', '[load]\ncancel_share = 0.2\ncancel_after = 8\n')
  const fromFile = load([toml], TARGET).load
  assert.equal(fromFile.cancel_share, 0.2)
  assert.equal(fromFile.cancel_after, 8)
  assert.equal(load([toml], { ...TARGET, cancel_after: 'first' }).load.cancel_after, 'first')
  const json = tempFile('cancel.json', JSON.stringify({ bench: { cancel_share: 1, cancel_after: 'first' } }))
  assert.deepEqual(
    [load([json], TARGET).load.cancel_share, load([json], TARGET).load.cancel_after],
    [1, 'first'],
  )
  const bad = tempFile('bad-cancel.toml', '[load]\ncancel_share = 1.5\ncancel_after = "last"\n')
  const issues = issuesOf([bad], TARGET)
  assert.match(issueAt(issues, 'load.cancel_share').message, /a share of requests from 0 to 1.*got 1\.5/)
  assert.match(
    issueAt(issues, 'load.cancel_after').message,
    /"first" or a positive integer of tokens.*got "last"/,
  )
  const flagIssues = issuesOf([], { ...TARGET, cancel_after: '0' })
  assert.match(issueAt(flagIssues, '--cancel-after').message, /first or a positive integer of tokens/)
})

test('--ramp: one timed level of the highest streams, lasting the ramp; refused with what adds or resizes levels', () => {
  const config = load([], { ...TARGET, levels: [1, 4, 16], requests: 40, ramp: 30 })
  assert.equal(config.load.ramp_s, 30)
  assert.deepEqual(config.load.levels, [16])
  assert.equal(config.load.duration_per_level_s, 30)
  assert.equal(config.load.requests_per_level, null)
  assert.equal(config.load.control, false)
  const toml = tempFile('ramp.toml', '[load]\nramp = 12\nlevels = [2, 8]\n')
  assert.deepEqual([load([toml], TARGET).load.ramp_s, load([toml], TARGET).load.levels], [12, [8]])
  for (const flags of [
    { mode: 'rate' },
    { search: true },
    { repeat: 2 },
    { sessions: true },
  ] as ConfigFlags[]) {
    const issues = issuesOf([], { ...TARGET, ramp: 10, ...flags })
    assert.match(
      issueAt(issues, 'ramp').message,
      /expected a ramp in concurrency mode without/,
      JSON.stringify(flags),
    )
    assert.match(issueAt(issues, 'ramp').file, /--ramp/)
  }
  assert.match(issueAt(issuesOf([], { ...TARGET, ramp: 0 }), '--ramp').message, /positive number of seconds/)
})

test('a later layer choosing duration clears an earlier requests_per_level, and vice versa', () => {
  const jsonDuration = tempFile('duration.json', '{ "bench": { "duration_per_level": 12 } }')
  const tomlRequests = tempFile('requests.toml', '[load]\nrequests_per_level = 7\n')
  const fromFiles = load([jsonDuration, tomlRequests], TARGET).load
  assert.equal(fromFiles.requests_per_level, 7)
  assert.equal(fromFiles.duration_per_level_s, null)

  const fromFlag = load([tomlRequests], { ...TARGET, duration: 3 }).load
  assert.equal(fromFlag.requests_per_level, null)
  assert.equal(fromFlag.duration_per_level_s, 3)
})

test('files of one kind layer in the order given', () => {
  const first = tempFile('first.json', '{ "llm": { "model": "first", "stream": false } }')
  const second = tempFile('second.json', '{ "llm": { "model": "second" } }')
  const config = load([first, second], { base_url: 'https://h' })
  assert.equal(config.target.model, 'second')
  assert.equal(config.client.stream, false, 'a key the later file leaves out keeps the earlier value')
})

test('extension keys are accepted and mapped', () => {
  const json = tempFile(
    'ext.json',
    '{ "llm": { "endpoint": "/v1/completions" }, "bench": { "duration_per_level": 15 } }',
  )
  const toml = tempFile(
    'ext.toml',
    [
      '[target]',
      'api_key_env = "TOML_KEY"',
      '[load]',
      'warmup_requests = 0',
      'input_tokens = 1024',
      '[metrics]',
      'percentiles = [50, 90, 99.9]',
    ].join('\n'),
  )
  const config = load([json, toml], TARGET)
  assert.equal(config.target.endpoint, '/v1/completions')
  assert.equal(config.target.api_key_env, 'TOML_KEY')
  assert.equal(config.load.duration_per_level_s, 15)
  assert.equal(config.load.requests_per_level, null)
  assert.equal(config.load.warmup_requests, 0)
  assert.equal(config.workload.input_tokens, 1024)
  assert.deepEqual(config.metrics.percentiles, [50, 90, 99.9])
})

test('sessions with embeddings are refused: there is no reply to carry', () => {
  const issues = issuesOf([], { base_url: 'http://h', model: 'm', sessions: true, protocol: 'embeddings' })
  assert.equal(issues.length, 1, JSON.stringify(issues))
  assert.match(issues[0]?.message ?? '', /got embeddings/)
})

test('sessions and a trace together are refused, naming both', () => {
  const issues = issuesOf([], { base_url: 'http://h', model: 'm', sessions: true, trace: 'trace.jsonl' })
  assert.equal(issues.length, 1, JSON.stringify(issues))
  assert.match(issues[0]?.message ?? '', /sessions or a trace, not both/)
})

test('protocol and endpoint agree: one given brings or names the other, both given are kept', () => {
  const base = { base_url: 'http://h', model: 'm' }
  assert.deepEqual(pick(load([], { ...base, protocol: 'messages' })), ['messages', '/v1/messages'])
  assert.deepEqual(pick(load([], { ...base, endpoint: '/v1/responses' })), ['responses', '/v1/responses'])
  assert.deepEqual(pick(load([], { ...base, endpoint: '/gw/anthropic/v1/messages?beta=true' })), [
    'messages',
    '/gw/anthropic/v1/messages?beta=true',
  ])
  assert.deepEqual(pick(load([], base)), ['chat', '/v1/chat/completions'])
  assert.deepEqual(pick(load([], { ...base, protocol: 'chat', endpoint: '/proxy/llm' })), [
    'chat',
    '/proxy/llm',
  ])
  const issue = issueAt(issuesOf([], { ...base, protocol: 'grpc' }), '--protocol')
  assert.match(issue.message, /one of chat, completions, responses, messages, embeddings/)
})

function pick(config: RunConfig): [string, string] {
  return [config.target.protocol, config.target.endpoint]
}

test('base_url keeps /v1 as written but loses trailing slashes', () => {
  const file = tempFile('slash.json', '{ "llm": { "base_url": "https://host/api/v1//", "model": "m" } }')
  assert.equal(load([file]).target.base_url, 'https://host/api/v1')
})

test('DEFAULTS: the documented values, empty base_url and model, frozen', () => {
  assert.deepEqual(DEFAULTS, DOCUMENTED_DEFAULTS)
  assert.ok(Object.isFrozen(DEFAULTS.load.levels))
  // A loaded config is a copy: changing it cannot change the defaults.
  const config = load([], TARGET)
  config.load.levels.push(128)
  assert.deepEqual(DEFAULTS.load.levels, [1, 4, 8, 16, 32, 64])
})

test('flags alone (no files) give the defaults plus the flags', () => {
  assert.deepEqual(load([], TARGET), {
    ...DEFAULTS,
    target: { ...DEFAULTS.target, base_url: 'https://flag-host/v1', model: 'flag-model' },
  })
})

test('keep-alive: on by default; off from [client] keepalive, settings.json llm.keepalive or --no-keepalive', () => {
  assert.equal(load([], TARGET).client.keepalive, true)
  assert.equal(load([tempFile('k.toml', '[client]\nkeepalive = false\n')], TARGET).client.keepalive, false)
  assert.equal(load([tempFile('k.json', '{"llm": {"keepalive": false}}')], TARGET).client.keepalive, false)
  assert.equal(load([], { ...TARGET, keepalive: false }).client.keepalive, false)
  const issue = issueAt(issuesOf([tempFile('bad.toml', '[client]\nkeepalive = "no"\n')]), 'client.keepalive')
  assert.match(issue.message, /true or false|boolean/i)
})

// ---------------------------------------------------------------------------------------------------
// Broken files: exact file and key path, every issue at once
// ---------------------------------------------------------------------------------------------------

test('wrong types: each key reported with what was expected and what was found', () => {
  const file = broken('wrong-types.json')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(where(issues), [
    [file, 'llm.timeout_seconds'],
    [file, 'llm.stream'],
    [file, 'bench.requests_per_level'],
    [file, 'bench.warmup_requests'],
  ])
  assert.equal(issues[0]?.message, 'expected a positive number of seconds, got "120"')
  assert.equal(issues[1]?.message, 'expected true or false, got "yes"')
  assert.equal(issues[2]?.message, 'expected a positive integer, got 2.5')
  assert.equal(issues[3]?.message, 'expected a non-negative integer, got -1')
})

test('unknown keys (top level and nested) in settings.json: one issue per key, with a guess', () => {
  const file = broken('unknown-keys.json')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(where(issues), [
    [file, 'llm.modle'],
    [file, 'llm.api_key'],
    [file, 'extra'],
  ])
  assert.match(
    issueAt(issues, 'llm.modle').message,
    /^expected a known key \(base_url, .*\), got unknown key "modle" \(did you mean "model"\?\)$/,
  )
  assert.equal(
    issueAt(issues, 'extra').message,
    'expected a known key (llm, bench, pricing, server_metrics), got unknown key "extra"',
  )
  // An unknown key's value is never shown: it may be a secret put in the wrong place.
  assert.ok(!issues.some((i) => i.message.includes('do-not-print-me')))
})

test('unknown keys (top level and nested) in config.toml', () => {
  const file = broken('unknown-keys.toml')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(where(issues).sort(), [
    [file, 'client.timeout_seconds'],
    [file, 'targets'],
  ])
  assert.match(issueAt(issues, 'targets').message, /did you mean "target"\?/)
  assert.match(issueAt(issues, 'client.timeout_seconds').message, /did you mean "timeout"\?/)
})

test('levels: negative, fractional, string and zero items each reported by index', () => {
  const file = broken('bad-levels.toml')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(issues, [
    { file, path: 'load.levels[1]', message: 'expected a positive integer, got -4' },
    { file, path: 'load.levels[2]', message: 'expected a positive integer, got 2.5' },
    { file, path: 'load.levels[3]', message: 'expected a positive integer, got "8"' },
    { file, path: 'load.levels[4]', message: 'expected a positive integer, got 0' },
  ])
})

test('empty levels', () => {
  const file = broken('empty-levels.json')
  assert.deepEqual(issuesOf([file], TARGET), [
    {
      file,
      path: 'bench.concurrency_levels',
      message: 'expected a non-empty list of positive integers, such as [1, 4, 8], got []',
    },
  ])
})

test('bad TOML syntax: file, line and column', () => {
  const file = broken('syntax.toml')
  assert.deepEqual(issuesOf([file], TARGET), [
    {
      file,
      path: '',
      message: 'expected valid TOML, got a syntax error at line 3, column 12: invalid value',
    },
  ])
})

test('bad JSON syntax: file, line and column', () => {
  // A temp file, not a fixture: a broken .json under test/ would fail the repository's lint run.
  const file = tempFile('syntax.json', '{\n  "llm": {\n    "model": "m"\n    "stream": true\n  }\n}\n')
  assert.deepEqual(issuesOf([file], TARGET), [
    { file, path: '', message: 'expected "," at line 4, column 5, got "\\"stream\\":"' },
  ])
})

test('settings.json as JSONC (VS Code style): // and /* */ comments and trailing commas are accepted', () => {
  const file = tempFile(
    'jsonc.json',
    [
      '// settings for the staging endpoint',
      '{',
      '  /* the model under test */',
      '  "llm": { "model": "jsonc-model", "stream": false, }, // trailing comma above',
      '  "bench": { "concurrency_levels": [1, 2, 4,], },',
      '}',
      '',
    ].join('\r\n'),
  )
  const config = load([file], { base_url: 'https://h' })
  assert.equal(config.target.model, 'jsonc-model')
  assert.equal(config.client.stream, false)
  assert.deepEqual(config.load.levels, [1, 2, 4])
})

test('JSONC: a "__proto__" key is a key like any other (refused as unknown), never the object\'s prototype', () => {
  const file = tempFile('proto.json', '{ "__proto__": { "llm": { "model": "from-prototype" } }, }')
  assert.deepEqual(
    issuesOf([file], TARGET).map((issue) => issue.path),
    ['__proto__'],
  )
})

test('JSONC syntax errors name line and column and what was expected', () => {
  const cases: [string, string][] = [
    ['{\n  "llm": { "stream": tru }\n}', 'expected a JSON value at line 2, column 22, got "tru"'],
    ['// settings\n{ /* unclosed', 'expected a comment closed with "*/" at line 2, column 3, got "/*"'],
    [
      "{ 'llm': {} }",
      `expected a property name in double quotes at line 1, column 3, got "'llm':" (JSON strings use double quotes)`,
    ],
    ['{ "bench": { "percentiles": [50,, 99] } }', 'expected a JSON value at line 1, column 33, got ","'],
    ['{ "llm": {} } }', 'expected end of file after the top-level value at line 1, column 15, got "}"'],
    ['{ "llm": {', 'expected "," or "}" at line 1, column 11, got end of file'],
    ['{ "llm" {} }', 'expected ":" at line 1, column 9, got "{}"'],
    ['', 'expected a JSON value at line 1, column 1, got end of file'],
  ]
  for (const [i, [text, message]] of cases.entries()) {
    const file = tempFile(`syntax-${i}.json`, text)
    assert.deepEqual(issuesOf([file], TARGET), [{ file, path: '', message }], text)
  }
})

test('unknown load.mode: a clear message naming the only accepted mode', () => {
  const file = broken('bad-mode.toml')
  assert.deepEqual(issuesOf([file], TARGET), [
    {
      file,
      path: 'load.mode',
      message: 'expected "concurrency_gradient" or "request_rate", got "rate"',
    },
  ])
})

test('percentiles out of (0, 100]', () => {
  const file = broken('percentiles.json')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(where(issues), [
    [file, 'bench.percentiles[0]'],
    [file, 'bench.percentiles[2]'],
  ])
  assert.equal(issues[1]?.message, 'expected a percentile greater than 0 and at most 100, got 100.5')
})

test('base_url not an http(s) URL, endpoint without a leading slash', () => {
  const file = broken('bad-url.toml')
  assert.deepEqual(issuesOf([file], TARGET), [
    {
      file,
      path: 'target.base_url',
      message: 'expected an http(s) URL, such as "https://host/v1", got "localhost:8000/v1"',
    },
    {
      file,
      path: 'target.endpoint',
      message: 'expected a path starting with "/", such as "/v1/chat/completions", got "v1/chat/completions"',
    },
  ])
})

test('requests_per_level and duration_per_level in one file is an issue for that file', () => {
  const json = broken('both-sizes.json')
  const toml = broken('both-sizes.toml')
  assert.deepEqual(issuesOf([json, toml], TARGET), [
    {
      file: json,
      path: 'bench',
      message:
        'expected either requests_per_level or duration_per_level, not both; got requests_per_level = 40 and duration_per_level = 30',
    },
    {
      file: toml,
      path: 'load',
      message:
        'expected either requests_per_level or duration_per_level, not both; got requests_per_level = 10 and duration_per_level = 5',
    },
  ])
  const flags = issuesOf([], { ...TARGET, requests: 10, duration: 5 })
  assert.deepEqual(where(flags), [['flags', '--requests']])
  assert.match(flags[0]?.message ?? '', /^expected either --requests or --duration, not both/)
})

test('a file that is not an object', () => {
  const file = broken('not-an-object.json')
  assert.deepEqual(issuesOf([file], TARGET), [
    { file, path: '', message: 'expected a JSON object with "llm" and/or "bench" sections, got [1,4,8]' },
  ])
})

test('many errors in one file are all reported at once', () => {
  const file = broken('many-errors.toml')
  const issues = issuesOf([file], TARGET)
  assert.deepEqual(where(issues), [
    [file, 'target.base_url'],
    [file, 'target.model'],
    [file, 'target.api_key_env'],
    [file, 'load.mode'],
    [file, 'load.levels'],
    [file, 'load.max_tokens'],
    [file, 'metrics.record_ttft'],
    [file, 'metrics.output_json'],
    [file, 'client.timeout'],
    [file, 'client.retry'],
    [file, 'client.verbose'],
  ])
  assert.equal(
    issueAt(issues, 'metrics.output_json').message,
    'expected a plain file name without slashes, such as "bench_result.json", got "out/bench_result.json"',
  )
  assert.equal(issueAt(issues, 'target.model').message, 'expected a non-empty model id, got ""')
})

test('an api_key_env that is not a variable name is never echoed (it may be the key itself)', () => {
  const issues = issuesOf([broken('many-errors.toml')], { ...TARGET, api_key_env: 'sk-flag-secret' })
  const text = new ConfigError(issues).message
  assert.ok(!text.includes('sk-secret-key-123'), text)
  assert.ok(!text.includes('sk-flag-secret'), text)
  assert.match(issueAt(issues, 'target.api_key_env').message, /not shown/)
})

test('issues from every file and the flags are collected into one error', () => {
  const bad = broken('bad-mode.toml')
  const badJson = tempFile('bad.json', '{ "llm": }')
  const issues = issuesOf(['missing.json', 'settings.yaml', bad, badJson], {
    ...TARGET,
    levels: [0, 2],
    timeout: -1,
  })
  assert.deepEqual(where(issues), [
    ['missing.json', ''],
    ['settings.yaml', ''],
    [bad, 'load.mode'],
    [badJson, ''],
    ['flags', '--levels[0]'],
    ['flags', '--timeout'],
  ])
  assert.equal(issues[0]?.message, 'expected a readable file, got no such file')
  assert.equal(issues[1]?.message, 'expected a .json (settings) or .toml (config) file, got ".yaml"')
  assert.equal(issues[4]?.message, 'expected a positive integer, got 0')
})

test('a directory is not a readable config file', () => {
  const dir = join(tmp, 'a-dir.json')
  mkdirSync(dir)
  assert.deepEqual(issuesOf([dir], TARGET), [
    { file: dir, path: '', message: 'expected a readable file, got a directory' },
  ])
})

// ---------------------------------------------------------------------------------------------------
// Checks on the merged result
// ---------------------------------------------------------------------------------------------------

test('no base_url or model anywhere: final issues that say where to set them', () => {
  const partial = tempFile('partial.json', '{ "bench": { "concurrency_levels": [1, 2] } }')
  assert.deepEqual(issuesOf([partial]), [
    {
      file: 'defaults',
      path: 'base_url',
      message: 'expected a base URL (llm.base_url, target.base_url or --base-url), got nothing',
    },
    {
      file: 'defaults',
      path: 'model',
      message: 'expected a model id (set llm.model, target.model or --model), got nothing',
    },
  ])
})

test('credentials in base_url are accepted (sent as Basic, see test/cli/auth-headers.test.ts)', () => {
  const config = loadRunConfig({
    configFiles: [],
    flags: { base_url: 'http://alice:s3cret-pass@127.0.0.1:8000/v1', model: 'm' },
  })
  assert.equal(config.target.base_url, 'http://alice:s3cret-pass@127.0.0.1:8000/v1')
})

test('a base_url that does not parse is quoted without its credentials or query', () => {
  for (const [url, shown] of [
    ['http://alice:s3cret-pass@127.0.0.1:99999/v1', '"http://***@127.0.0.1:99999/v1"'],
    ['alice:s3cret-pass@127.0.0.1/v1', '"***@127.0.0.1/v1"'],
    ['http://h:99999/v1?api_key=s3cret-pass', '"http://h:99999/v1?***"'],
  ] as const) {
    const issues = issuesOf([], { base_url: url, model: 'm' })
    assert.ok(!JSON.stringify(issues).includes('s3cret'), url)
    assert.match(
      issues[0]?.message ?? '',
      new RegExp(`expected an http\\(s\\) URL.*got ${shown.replace(/[?*().]/g, '\\$&')}`),
    )
  }
})

test('final checks stay quiet about a value a failed source may have set', () => {
  // many-errors.toml sets base_url and model (badly): "missing" would be a wrong, second complaint.
  const mentioned = issuesOf([broken('many-errors.toml')])
  assert.ok(!mentioned.some((i) => i.file === 'defaults'), JSON.stringify(mentioned))
  // An unparseable file could have set anything.
  const unparsed = issuesOf([broken('syntax.toml')])
  assert.deepEqual(where(unparsed), [[broken('syntax.toml'), '']])
  // A failed file that does not mention the model does not hide its absence.
  const other = issuesOf([broken('bad-url.toml')])
  assert.deepEqual(where(other).at(-1), ['defaults', 'model'])
})

// ---------------------------------------------------------------------------------------------------
// ConfigError and templates
// ---------------------------------------------------------------------------------------------------

test('ConfigError: exit code 2, one line per issue as FILE: KEY.PATH: message', () => {
  let error: unknown
  try {
    load([broken('percentiles.json'), 'nope.toml'], TARGET)
  } catch (err) {
    error = err
  }
  assert.ok(error instanceof ConfigError)
  assert.equal(error.exitCode, 2)
  assert.equal(error.name, 'ConfigError')
  assert.deepEqual(error.message.split('\n'), [
    `${broken('percentiles.json')}: bench.percentiles[0]: expected a percentile greater than 0 and at most 100, got 0`,
    `${broken('percentiles.json')}: bench.percentiles[2]: expected a percentile greater than 0 and at most 100, got 100.5`,
    'nope.toml: expected a readable file, got no such file',
  ])
})

test('long found values are truncated to 60 characters', () => {
  const file = tempFile(
    'long.json',
    JSON.stringify({ llm: { model: 'x'.repeat(200), stream: 'y'.repeat(200) } }),
  )
  const message = issueAt(issuesOf([file], TARGET), 'llm.stream').message
  const found = message.slice(message.indexOf(', got ') + ', got '.length)
  assert.equal(found.length, 60)
  assert.ok(found.endsWith('...'))
})

test('init templates load cleanly, alone and together', () => {
  const json = tempFile('template-settings.json', SETTINGS_JSON_TEMPLATE)
  const toml = tempFile('template-config.toml', CONFIG_TOML_TEMPLATE)
  const fromJson = load([json])
  assert.equal(fromJson.target.model, 'your-model-id')
  assert.equal(fromJson.load.requests_per_level, 40)
  const fromToml = load([toml])
  assert.equal(fromToml.load.duration_per_level_s, 30)
  assert.equal(fromToml.target.base_url, 'http://127.0.0.1:8000/v1')
  const both = load([json, toml])
  assert.equal(both.load.duration_per_level_s, 30)
  assert.equal(both.load.requests_per_level, null)
})

test('INIT_NOTES explains every key of the settings.json template', () => {
  const template: unknown = JSON.parse(SETTINGS_JSON_TEMPLATE)
  assert.ok(typeof template === 'object' && template !== null)
  for (const [section, keys] of Object.entries(template)) {
    for (const key of Object.keys(keys as object))
      assert.ok(INIT_NOTES.includes(`${section}.${key}`), `${section}.${key}`)
  }
})

test('SLOs: [slo] in config.toml, bench.slo in settings.json, --slo; a bad key or value names its path', () => {
  const toml = tempFile('slo.toml', '[slo]\nttft_p95_ms = 800\ntpot_p95_ms = 50\n')
  assert.deepEqual(load([toml], TARGET).metrics.slo, { ttft_p95_ms: 800, tpot_p95_ms: 50 })
  const json = tempFile('slo.json', '{ "bench": { "slo": { "e2e_p99_ms": 20000 } } }')
  assert.deepEqual(load([json], TARGET).metrics.slo, { e2e_p99_ms: 20000 })
  assert.deepEqual(load([json], { ...TARGET, slo: { ttft_p50_ms: 100 } }).metrics.slo, { ttft_p50_ms: 100 })
  // The spelling now, without _ms, beside the older one it replaced (still read, as written).
  const now = tempFile('slo-now.toml', '[slo]\nttft_p95 = 800\nitl_p99 = 40\n')
  assert.deepEqual(load([now], TARGET).metrics.slo, { ttft_p95: 800, itl_p99: 40 })
  const bad = tempFile('bad-slo.toml', '[slo]\nlatency_ms = 5\nttft_p95_ms = -1\n')
  const issues = issuesOf([bad], TARGET)
  assert.ok(
    issues.some((i) => i.path.startsWith('slo') && /an SLO key like ttft_p95,/.test(i.message)),
    JSON.stringify(issues),
  )
  assert.ok(
    issues.some((i) => i.path === 'slo.ttft_p95_ms' && /a positive number of milliseconds/.test(i.message)),
    JSON.stringify(issues),
  )
})

// ---------------------------------------------------------------------------------------------------
// Workload, request-rate mode and pricing keys
// ---------------------------------------------------------------------------------------------------

test('config.toml [workload], [load] request_rate and [pricing] keys map onto the RunConfig', () => {
  const toml = tempFile(
    'workload.toml',
    [
      '[load]',
      'mode = "request_rate"',
      'rates = [0.5, 2]',
      'arrival = "gamma"',
      'burstiness = 0.25',
      'duration_per_level = 20',
      'warmup_seconds = 5',
      'cooldown_seconds = 2',
      '[workload]',
      'input_tokens = "uniform(100, 300)"',
      'output_tokens = "normal(256, 32)"',
      'tokenizer = "cl100k"',
      'shared_prefix = 50',
      'ignore_eos = true',
      '[pricing]',
      'input_per_mtok = 0.15',
      'output_per_mtok = 0.6',
      'currency = "EUR"',
      'max_cost = 3',
    ].join('\n'),
  )
  const config = load([toml], TARGET)
  assert.equal(config.load.mode, 'request_rate')
  assert.deepEqual(config.load.rates, [0.5, 2])
  assert.equal(config.load.arrival, 'gamma')
  assert.equal(config.load.burstiness, 0.25)
  assert.equal(config.load.warmup_s, 5)
  assert.equal(config.load.cooldown_s, 2)
  assert.deepEqual(config.workload.input, { kind: 'uniform', min: 100, max: 300 })
  assert.deepEqual(config.workload.output, { kind: 'normal', mean: 256, sd: 32 })
  assert.equal(config.workload.input_tokens, 200, 'the mean of the distribution')
  assert.equal(config.workload.output_tokens, 256)
  assert.equal(config.workload.tokenizer, 'cl100k')
  assert.equal(config.workload.shared_prefix, 50)
  assert.equal(config.workload.ignore_eos, true)
  assert.deepEqual(config.pricing, { input_per_mtok: 0.15, output_per_mtok: 0.6, currency: 'EUR' })
  assert.equal(config.run.max_cost, 3)
  // A later source naming one price keeps the other and the currency.
  const flagsOver = load([toml], { ...TARGET, mode: 'concurrency' })
  assert.equal(flagsOver.load.mode, 'concurrency')
})

test('profiles: presets set the lengths below every file and flag; a profile file is read like a config', () => {
  const rag = load([], { ...TARGET, profile: 'rag' })
  assert.deepEqual(rag.workload.input, { kind: 'normal', mean: 3072, sd: 512 })
  assert.deepEqual(rag.workload.output, { kind: 'normal', mean: 256, sd: 64 })
  assert.equal(rag.workload.profile, 'rag')
  const overridden = load([], { ...TARGET, profile: 'codegen', output_tokens: 900 })
  assert.deepEqual(overridden.workload.input, { kind: 'normal', mean: 384, sd: 96 })
  assert.deepEqual(overridden.workload.output, { kind: 'fixed', value: 900 })
  const inToml = load([tempFile('chat.toml', '[workload]\nprofile = "chat"\n')], TARGET)
  assert.equal(inToml.workload.output_tokens, 512)
  const profileFile = tempFile(
    'summarize.toml',
    '[workload]\ninput_tokens = 2000\noutput_tokens = "uniform(50, 150)"\n',
  )
  const fromFile = load([tempFile('uses.toml', '[workload]\noutput_tokens = 99\n')], {
    ...TARGET,
    profile: profileFile,
  })
  assert.deepEqual(fromFile.workload.input, { kind: 'fixed', value: 2000 })
  assert.deepEqual(
    fromFile.workload.output,
    { kind: 'fixed', value: 99 },
    'the config file beats the profile',
  )
})

test('workload mistakes: bad lengths, unknown profile, dataset lengths without a dataset, prefix too long', () => {
  const lengths = issuesOf([], { ...TARGET, input_tokens: 'normal(512)', output_tokens: 0 })
  assert.deepEqual(
    lengths.map((issue) => issue.path),
    ['--input-tokens', '--output-tokens'],
  )
  assert.match(lengths[0]?.message ?? '', /normal\(512, 64\)/)
  assert.match(lengths[0]?.message ?? '', /got "normal\(512\)"/)
  const profile = issuesOf([], { ...TARGET, profile: 'summarise' })
  assert.equal(profile.length, 1)
  assert.equal(profile[0]?.path, '--profile')
  assert.match(profile[0]?.message ?? '', /"chat", "rag", "codegen" or a path to a profile file/)
  const missingProfile = issuesOf([], { ...TARGET, profile: join(tmp, 'nope.toml') })
  assert.match(missingProfile[0]?.message ?? '', /no such file/)
  assert.equal(missingProfile[0]?.file, join(tmp, 'nope.toml'))
  const dataset = issuesOf([], { ...TARGET, output_tokens: 'dataset' })
  assert.match(dataset[0]?.message ?? '', /expected a dataset/)
  const prefix = issuesOf([], { ...TARGET, input_tokens: 100, shared_prefix: 100 })
  assert.equal(prefix[0]?.path, 'shared_prefix')
  // Sessions send the shared prefix as a system prompt of its own: no prompt has to be longer than it.
  assert.equal(
    load([], { ...TARGET, input_tokens: 100, shared_prefix: 100, sessions: true }).workload.sessions,
    true,
  )
  // A session's turns wait for each other: an open loop cannot run them.
  const openSessions = issuesOf([], { ...TARGET, mode: 'rate', sessions: true })
  assert.deepEqual(
    openSessions.map((issue) => issue.path),
    ['sessions'],
  )
  assert.match(openSessions[0]?.message ?? '', /only a closed loop/)
  const rate = issuesOf([tempFile('bad-rate.toml', '[load]\nrates = [0, 2]\narrival = "bursty"\n')], TARGET)
  assert.deepEqual(
    rate.map((issue) => issue.path),
    ['load.rates[0]', 'load.arrival'],
  )
  const price = issuesOf([tempFile('bad-price.json', '{"pricing": {"input_per_mtok": -1}}')], TARGET)
  assert.equal(price[0]?.path, 'pricing.input_per_mtok')
  const noPrices = issuesOf([], { ...TARGET, max_cost: 5 })
  assert.equal(noPrices[0]?.path, 'max_cost')
  assert.match(noPrices[0]?.message ?? '', /expected prices to estimate the cost with/)
})

test('reset_cache: settings.json bench.reset_cache, config.toml load.reset_cache and --reset-cache; a wrong value names the key and the values', () => {
  assert.equal(load([], TARGET).run.reset_cache, 'off', 'off by default')
  const json = tempFile('reset.json', JSON.stringify({ bench: { reset_cache: 'before-run' } }))
  assert.equal(load([json], TARGET).run.reset_cache, 'before-run')
  const toml = tempFile('reset.toml', '[load]\nreset_cache = "before-level"\n')
  assert.equal(load([toml], TARGET).run.reset_cache, 'before-level')
  assert.equal(load([toml], { ...TARGET, reset_cache: 'off' }).run.reset_cache, 'off', 'the flag wins')
  const wrong = tempFile('reset-wrong.toml', '[load]\nreset_cache = "always"\n')
  const issue = issueAt(issuesOf([wrong], TARGET), 'load.reset_cache')
  assert.match(issue.message, /"off", "before-level", "before-run"/)
  const flag = issuesOf([], { ...TARGET, reset_cache: 'between' })
  assert.equal(flag.length, 1)
  assert.match(JSON.stringify(flag[0]), /reset-cache/)
})

test('jobs: --fan-out and --tool-wait set the synthetic shape; sessions, an open loop or embeddings are refused', () => {
  const config = load([], {
    ...TARGET,
    jobs: true,
    fan_out: 2,
    tool_wait: 1.5,
    input_tokens: 50,
    shared_prefix: 200,
  })
  assert.equal(config.workload.jobs, true)
  assert.equal(config.workload.fan_out, 2)
  assert.equal(config.workload.tool_wait_s, 1.5)
  const fromFile = load(
    [tempFile('jobs.toml', '[workload]\njobs = true\nfan_out = 3\ntool_wait_seconds = 0.25\n')],
    TARGET,
  )
  assert.deepEqual([fromFile.workload.fan_out, fromFile.workload.tool_wait_s], [3, 0.25])
  const both = issuesOf([], { ...TARGET, jobs: true, sessions: true })
  assert.deepEqual(
    both.map((issue) => issue.path),
    ['jobs'],
  )
  assert.match(both[0]?.message ?? '', /expected jobs without sessions/)
  const open = issuesOf([], { ...TARGET, jobs: true, mode: 'rate' })
  assert.match(open.map((issue) => issue.message).join('\n'), /mode "concurrency" with jobs/)
  const embeddings = issuesOf([], { ...TARGET, jobs: true, protocol: 'embeddings' })
  assert.match(
    embeddings.map((issue) => issue.message).join('\n'),
    /protocol that generates replies with jobs/,
  )
  const jctWithoutJobs = issuesOf([], { ...TARGET, slo: { jct_p90_ms: 12_000 } })
  assert.match(jctWithoutJobs.map((issue) => issue.message).join('\n'), /expected jobs with an SLO on jct/)
  assert.deepEqual(load([], { ...TARGET, jobs: true, slo: { jct_p90_ms: 12_000 } }).metrics.slo, {
    jct_p90_ms: 12_000,
  })
  const badFanOut = issuesOf([], { ...TARGET, jobs: true, fan_out: 0 })
  assert.equal(badFanOut[0]?.path, '--fan-out')
})
