import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags, RunConfig } from '../../src/config/types.js'
import { configDigest } from '../../src/run/plan/config-digest.js'
import { readApiKey } from '../../src/run/setup/api-key.js'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'
import { configErrorMessage } from '../helpers/config-error.js'
import { tempDir } from '../helpers/run-config.js'

const FIXTURES = new URL('../fixtures/config/other-tools/', import.meta.url)
const CLAUDE_TOKEN = 'cc-TOKEN-in-settings-31337'
const CODEX_TOKEN = 'cx-TOKEN-in-config-4242'

/** A fixture copied to a temporary folder with its base URL filled in. */
function fixture(name: string, baseUrl = 'http://127.0.0.1:9/v1'): string {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8').replace('__BASE_URL__', baseUrl)
  const path = join(tempDir(), name)
  writeFileSync(path, text)
  return path
}

function write(name: string, text: string): string {
  const path = join(tempDir(), name)
  writeFileSync(path, text)
  return path
}

function load(files: string[], flags: ConfigFlags = {}): RunConfig {
  return loadRunConfig({ configFiles: files, flags })
}

const problems = configErrorMessage

test('a Claude Code settings.json: Messages at its base URL, the alias resolved, the token read from the file', () => {
  const file = fixture('claude-code-settings.json', 'https://gateway.example/anthropic/')
  const config = load([file])
  assert.deepEqual(config.target, {
    base_url: 'https://gateway.example/anthropic',
    endpoint: '/v1/messages',
    protocol: 'messages',
    model: 'gateway-sonnet',
    more_base_urls: [],
    endpoint_weights: [],
    more_models: [],
    model_weights: [],
    api_key_env: 'ANTHROPIC_AUTH_TOKEN',
    api_key_file: { file, path: ['env', 'ANTHROPIC_AUTH_TOKEN'] },
    auth: 'bearer',
    headers: { 'x-team': 'bench', 'x-route-secret': 'route-SECRET-2718' },
    env_headers: {},
  })
  assert.ok(!JSON.stringify(config).includes(CLAUDE_TOKEN), 'the key is not in the config')
  assert.ok(!configDigest(config).includes(CLAUDE_TOKEN))
  // The file's value wins over the shell's, as in Claude Code.
  assert.equal(readApiKey(config, { ANTHROPIC_AUTH_TOKEN: 'from-shell' }), CLAUDE_TOKEN)
  const endpoint = resolveEndpoint(config, readApiKey(config, {}), {})
  assert.equal(endpoint.headers.authorization, `Bearer ${CLAUDE_TOKEN}`)
  assert.equal(endpoint.headers['anthropic-version'], '2023-06-01')
  assert.ok(endpoint.secrets.includes(CLAUDE_TOKEN))
  assert.ok(endpoint.secrets.includes('route-SECRET-2718'), 'a custom header named like a secret is one')
})

test('Claude Code: ANTHROPIC_API_KEY goes as x-api-key; ANTHROPIC_MODEL beats the alias; flags override the file', () => {
  const file = write(
    'settings.json',
    JSON.stringify({
      model: 'opus',
      env: { ANTHROPIC_API_KEY: 'ak-FILE-key-1', ANTHROPIC_MODEL: 'exact-model' },
    }),
  )
  const config = load([file])
  assert.equal(config.target.base_url, 'https://api.anthropic.com')
  assert.equal(config.target.model, 'exact-model')
  assert.equal(config.target.auth, 'x-api-key')
  assert.deepEqual(config.target.api_key_file, { file, path: ['env', 'ANTHROPIC_API_KEY'] })
  const overridden = load([file], { api_key_env: 'MY_KEY', model: 'm2', base_url: 'http://127.0.0.1:9' })
  assert.equal(overridden.target.api_key_file, null, 'a named variable replaces the key file')
  assert.equal(readApiKey(overridden, { MY_KEY: 'shell-key' }), 'shell-key')
  assert.equal(overridden.target.model, 'm2')
  // An alias the file does not map names no model: the usual "expected a model id" follows.
  const alias = write(
    'settings.json',
    JSON.stringify({ model: 'haiku', env: { ANTHROPIC_BASE_URL: 'http://h' } }),
  )
  assert.match(problems([alias]), /defaults: model: expected a model id/)
})

test('a Codex config.toml: the chosen provider, Codex paths, query, headers, env headers', () => {
  const file = fixture('codex-config.toml', 'https://gateway.example/v1')
  const config = load([file])
  assert.deepEqual(config.target, {
    base_url: 'https://gateway.example/v1?route=bench',
    endpoint: '/chat/completions',
    protocol: 'chat',
    model: 'gateway-model',
    more_base_urls: [],
    endpoint_weights: [],
    more_models: [],
    model_weights: [],
    api_key_env: 'GATEWAY_API_KEY',
    api_key_file: null,
    auth: 'auto',
    headers: { 'x-team': 'bench' },
    env_headers: { 'x-gateway-project': 'GATEWAY_PROJECT' },
  })
  const endpoint = resolveEndpoint(config, 'gk-1234', { GATEWAY_PROJECT: 'p1' })
  assert.equal(endpoint.url, 'https://gateway.example/v1/chat/completions?route=bench')
  assert.equal(endpoint.headers['x-gateway-project'], 'p1')
  assert.equal(endpoint.headers.authorization, 'Bearer gk-1234')
})

test('Codex: a token kept in the file is read, never copied; the built-in openai provider; responses by default', () => {
  const file = fixture('codex-token-config.toml')
  const config = load([file])
  assert.deepEqual(config.target.api_key_file, {
    file,
    path: ['model_providers', 'local', 'experimental_bearer_token'],
  })
  assert.ok(!JSON.stringify(config).includes(CODEX_TOKEN))
  assert.equal(readApiKey(config, {}), CODEX_TOKEN)
  const builtIn = load([write('config.toml', 'model = "gpt-5"\nmodel_provider = "openai"\n')])
  assert.equal(builtIn.target.base_url, 'https://api.openai.com/v1')
  assert.equal(builtIn.target.endpoint, '/responses')
  assert.equal(builtIn.target.protocol, 'responses')
  assert.equal(builtIn.target.api_key_env, 'OPENAI_API_KEY')
  const noKey = load([
    write(
      'config.toml',
      'model = "x"\nmodel_provider = "l"\n[model_providers.l]\nbase_url = "http://127.0.0.1:9/v1"\n',
    ),
  ])
  assert.equal(noKey.target.auth, 'none', 'Codex sends no key for a provider without env_key')
})

test("mistakes in another tool's file name the file and the key path, never the key", () => {
  const missing = write(
    'config.toml',
    'model = "x"\nmodel_provider = "gw"\n[model_providers.other]\nbase_url = "http://h"\n',
  )
  assert.match(
    problems([missing]),
    new RegExp(`${missing}: model_provider: expected a \\[model_providers\\.gw\\] table`),
  )
  const noUrl = write(
    'config.toml',
    'model = "x"\nmodel_provider = "gw"\n[model_providers.gw]\nenv_key = "K"\n',
  )
  assert.match(problems([noUrl]), /model_providers\.gw\.base_url: expected the provider's base_url/)
  const bad = write(
    'config.toml',
    'model_provider = "gw"\n[model_providers.gw]\nbase_url = "not a url"\nwire_api = "grpc"\nenv_key = "sk-PASTED-key-0000"\nexperimental_bearer_token = 12345678\n',
  )
  const message = problems([bad])
  assert.match(message, /model_providers\.gw\.base_url: expected an http\(s\) URL/)
  assert.match(message, /model_providers\.gw\.wire_api: expected "responses" or "chat", got "grpc"/)
  assert.match(message, /model_providers\.gw\.env_key: expected the name of an environment variable/)
  assert.match(
    message,
    /model_providers\.gw\.experimental_bearer_token: expected a string, got a value \(not shown/,
  )
  assert.ok(!message.includes('PASTED') && !message.includes('12345678'), message)
  const claude = write(
    'settings.json',
    JSON.stringify({ env: { ANTHROPIC_BASE_URL: 'ftp://x', ANTHROPIC_AUTH_TOKEN: ['tok-SECRET-list'] } }),
  )
  const claudeMessage = problems([claude])
  assert.match(claudeMessage, new RegExp(`${claude}: env\\.ANTHROPIC_BASE_URL: expected an http\\(s\\) URL`))
  assert.match(claudeMessage, /env\.ANTHROPIC_AUTH_TOKEN: expected a string, got a value \(not shown/)
  assert.ok(!claudeMessage.includes('tok-SECRET'))
  const headers = write(
    'settings.json',
    JSON.stringify({ env: { ANTHROPIC_CUSTOM_HEADERS: 'no colon here' } }),
  )
  assert.match(problems([headers]), /env\.ANTHROPIC_CUSTOM_HEADERS: expected "Name: Value" lines/)
})

test("llmbench's own files are not mistaken for another tool's", () => {
  const own = write(
    'settings.json',
    JSON.stringify({ llm: { base_url: 'http://h/v1', model: 'm' }, env: { ANTHROPIC_MODEL: 'x' } }),
  )
  assert.match(problems([own]), /unknown key "env"/)
})
