import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { configFlags } from '../../src/cli/setting-flags.js'
import { ConfigError } from '../../src/config/errors.js'
import { loadRunConfig } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { configDigest } from '../../src/run/plan/config-digest.js'
import { endpointFromEnv } from '../../src/run/setup/resolve-endpoint.js'
import { resolveTargets, splitMetaOf } from '../../src/run/setup/run-targets.js'
import { scrapeTargets } from '../../src/server-metrics/targets.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Endpoints resolved once (issue 37 item 3): each endpoint of a run with its own URL, key and headers,
 * the run's own where its entry names none.
 */

const RUN_KEY = 'sk-run-key-0001'
const GATEWAY_KEY = 'sk-gateway-key-0002'
const ENV = { OPENAI_API_KEY: RUN_KEY, GATEWAY_KEY, TENANT_TOKEN: 'tenant-token-0003' }

function configFile(text: string): string {
  const path = join(tempDir(), 'config.toml')
  writeFileSync(path, text)
  return path
}

const FOUR_ENDPOINTS = `
[target]
base_url = "http://a.test:8000/v1"
model = "m"
more_base_urls = [
  "http://b.test:8000/v1/",
  { url = "http://c.test:8000/v1", api_key_env = "GATEWAY_KEY", headers = { "X-Tenant" = "c" }, env_headers = { "X-Tenant-Token" = "TENANT_TOKEN" } },
  { url = "http://d.test:8000/v1", headers = { "X-Tenant" = "d" } },
]

[target.headers]
"X-Team" = "bench"
`

function fourEndpoints(): RunConfig {
  return loadRunConfig({ configFiles: [configFile(FOUR_ENDPOINTS)], flags: {} })
}

test('each endpoint its own key and headers; one that names none takes the first endpoint’s, as before', () => {
  const config = fourEndpoints()
  const notes: string[] = []
  const run = resolveTargets(config, endpointFromEnv(config, ENV), ENV, (line) => notes.push(line))
  const [a, b, c, d] = run.endpoints.map((resolved) => resolved.endpoint)
  assert.deepEqual(
    [a, b, c, d].map((endpoint) => endpoint?.url),
    ['a', 'b', 'c', 'd'].map((host) => `http://${host}.test:8000/v1/chat/completions`),
  )
  // The first, and a plain URL beside it: the run's key and headers.
  for (const endpoint of [a, b]) {
    assert.equal(endpoint?.headers.authorization, `Bearer ${RUN_KEY}`)
    assert.equal(endpoint?.headers['x-team'], 'bench')
  }
  // Its own key variable and headers, in place of the run's: the run's key never goes to it.
  assert.equal(c?.headers.authorization, `Bearer ${GATEWAY_KEY}`)
  assert.equal(c?.headers['x-tenant'], 'c')
  assert.equal(c?.headers['x-tenant-token'], 'tenant-token-0003')
  assert.equal(c?.headers['x-team'], undefined)
  assert.equal(c?.apiKeyEnv, 'GATEWAY_KEY')
  assert.ok(!JSON.stringify(c?.headers).includes(RUN_KEY))
  // Its own headers only: the key stays the run's.
  assert.equal(d?.headers.authorization, `Bearer ${RUN_KEY}`)
  assert.equal(d?.headers['x-tenant'], 'd')
  assert.equal(d?.headers['x-team'], undefined)
  // The rest is the first endpoint's: path, protocol, timeouts, stream.
  for (const endpoint of [b, c, d]) {
    assert.equal(endpoint?.path, a?.path)
    assert.equal(endpoint?.protocol, a?.protocol)
    assert.equal(endpoint?.timeoutMs, a?.timeoutMs)
    assert.equal(endpoint?.stream, a?.stream)
  }
  // Whichever endpoint a message comes from, every key is scrubbed from it.
  for (const endpoint of [a, b, c, d])
    for (const secret of [RUN_KEY, GATEWAY_KEY, 'tenant-token-0003'])
      assert.ok(endpoint?.secrets.includes(secret), `${endpoint?.url} scrubs ${secret.slice(0, 9)}`)
  // The targets carry the resolved endpoints; the result's copy holds no key.
  assert.equal(run.targets[2]?.endpoint.headers.authorization, `Bearer ${GATEWAY_KEY}`)
  const shown = JSON.stringify(splitMetaOf(run))
  for (const secret of [RUN_KEY, GATEWAY_KEY]) assert.ok(!shown.includes(secret))
  assert.deepEqual(notes, [
    'headers: x-tenant: c, x-tenant-token: [from $TENANT_TOKEN] (endpoint http://c.test:8000/v1)',
    'headers: x-tenant: d (endpoint http://d.test:8000/v1)',
  ])
})

test("an endpoint's key variable not set: it is sent no key (not the run's), and the note names it", () => {
  const config = fourEndpoints()
  const env = { OPENAI_API_KEY: RUN_KEY }
  const notes: string[] = []
  const run = resolveTargets(config, endpointFromEnv(config, env), env, (line) => notes.push(line))
  assert.equal(run.endpoints[2]?.endpoint.headers.authorization, undefined)
  assert.ok(
    notes.includes(
      'note: $GATEWAY_KEY is not set: sending no Authorization header (endpoint http://c.test:8000/v1)',
    ),
    notes.join('\n'),
  )
})

test("each server's /metrics is scraped with its own endpoint's headers", () => {
  const config = fourEndpoints()
  const run = resolveTargets(config, endpointFromEnv(config, ENV), ENV)
  const scrapes = scrapeTargets(
    { enabled: true, urls: ['auto'], interval_s: 1 },
    run.endpoints.map((resolved) => resolved.endpoint),
  )
  assert.deepEqual(
    scrapes.map((scrape) => [scrape.url, scrape.headers.authorization]),
    [
      ['http://a.test:8000/metrics', `Bearer ${RUN_KEY}`],
      ['http://b.test:8000/metrics', `Bearer ${RUN_KEY}`],
      ['http://c.test:8000/metrics', `Bearer ${GATEWAY_KEY}`],
      ['http://d.test:8000/metrics', `Bearer ${RUN_KEY}`],
    ],
  )
})

test('plain URLs keep the digest they had; an entry is digested without its header secrets', () => {
  const plain = loadRunConfig({
    configFiles: [],
    flags: configFlags({ 'base-url': ['http://a.test/v1', 'http://b.test/v1/'], model: 'm' }),
  })
  assert.deepEqual(plain.target.more_base_urls, ['http://b.test/v1'])
  const entry = structuredClone(plain)
  entry.target.more_base_urls = [
    { url: 'http://b.test/v1', headers: { authorization: 'Bearer sk-in-a-header-42' } },
  ]
  assert.notEqual(configDigest(entry), configDigest(plain))
  const other = structuredClone(entry)
  other.target.more_base_urls = [
    { url: 'http://b.test/v1', headers: { authorization: 'Bearer sk-another-one-43' } },
  ]
  assert.equal(configDigest(other), configDigest(entry), 'the header value is not part of the digest')
})

/** The issues loading `more_base_urls = <value>` gives, as "path: message". */
function issuesOf(value: string): string[] {
  const file = configFile(`[target]\nbase_url = "http://a.test/v1"\nmodel = "m"\nmore_base_urls = ${value}\n`)
  try {
    loadRunConfig({ configFiles: [file], flags: {} })
  } catch (error) {
    assert.ok(error instanceof ConfigError)
    for (const issue of error.issues) assert.equal(issue.file, file)
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`)
  }
  assert.fail('expected a ConfigError')
}

test('a bad endpoint entry names its file, its key path and what was expected, never a key', () => {
  assert.deepEqual(issuesOf('[{ url = "http://b.test", api_key_env = "sk-pasted-key-9999" }]'), [
    'target.more_base_urls[0].api_key_env: expected the name of an environment variable (letters, digits, "_"), not the key itself, got a value that is not a variable name (not shown: it may be the key itself)',
  ])
  const [unknown] = issuesOf('[{ url = "http://b.test", api_key = "X" }]')
  assert.match(
    unknown ?? '',
    /^target\.more_base_urls\[0\]\.api_key: expected a known key \(url, api_key_env, headers, env_headers\), got unknown key "api_key" \(did you mean "api_key_env"\?\)/,
  )
  assert.deepEqual(issuesOf('[{ api_key_env = "B_KEY" }]'), [
    'target.more_base_urls[0].url: expected an http(s) URL without user:password@, such as "http://host-b:8000/v1", got nothing',
  ])
  const [credentials] = issuesOf('[{ url = "http://user:pw-secret-77@b.test" }]')
  assert.match(
    credentials ?? '',
    /^target\.more_base_urls\[0\]\.url: expected an http\(s\) URL without user:password@/,
  )
  assert.ok(!credentials?.includes('pw-secret-77'), credentials)
  const [header] = issuesOf('[{ url = "http://b.test", headers = { "X-Key" = 7 } }]')
  assert.match(header ?? '', /^target\.more_base_urls\[0\]\.headers\.X-Key: expected a header value/)
  assert.deepEqual(issuesOf('[7]'), [
    'target.more_base_urls[0]: expected a list of http(s) URLs without user:password@ or of { url, api_key_env, headers, env_headers } entries, such as ["http://host-b:8000/v1"], got 7',
  ])
})
