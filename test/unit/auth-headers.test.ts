import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { placeAuth } from '../../src/config/auth-mode.js'
import { isSecretHeaderName } from '../../src/config/headers.js'
import { loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags, RunConfig } from '../../src/config/types.js'
import { joinUrl } from '../../src/config/url.js'
import { ANTHROPIC_VERSION } from '../../src/protocols/wire-protocol.js'
import { configDigest } from '../../src/run/plan/config-digest.js'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'
import { configErrorMessage } from '../helpers/config-error.js'
import { tempDir } from '../helpers/run-config.js'

const KEY = 'sk-UNIT-distinctive-5150'
const TARGET = { base_url: 'http://127.0.0.1:9/v1', model: 'm' }

function load(flags: ConfigFlags, files: string[] = []): RunConfig {
  return loadRunConfig({ configFiles: files, flags: { ...TARGET, ...flags } })
}

function issuesOf(flags: ConfigFlags, files: string[] = []): string {
  return configErrorMessage(files, { ...TARGET, ...flags })
}

test('auto places the key by protocol and host; a given mode is kept', () => {
  assert.equal(placeAuth('auto', 'chat', 'https://api.openai.com/v1'), 'bearer')
  assert.equal(placeAuth('auto', 'messages', 'https://gateway.example/v1'), 'x-api-key')
  assert.equal(placeAuth('auto', 'chat', 'https://team.openai.azure.com/openai/deployments/d'), 'api-key')
  assert.equal(placeAuth('auto', 'chat', 'https://openai.azure.com.evil.example/v1'), 'bearer')
  assert.equal(placeAuth('none', 'messages', 'https://team.openai.azure.com'), 'none')
  assert.equal(placeAuth('bearer', 'messages', 'https://x'), 'bearer')
})

test('auto says why the key goes elsewhere than a bearer token, naming the protocol or the host', () => {
  const notesOf = (flags: ConfigFlags) => {
    const notes: string[] = []
    resolveEndpoint(load({ auth: 'auto', ...flags }), KEY, {}, (line) => notes.push(line))
    return notes.join('\n')
  }
  assert.match(
    notesOf({ protocol: 'messages' }),
    /sending the key as x-api-key \(auto: the messages protocol\)/,
  )
  assert.match(
    notesOf({ base_url: 'https://team.openai.azure.com/openai/deployments/d' }),
    /sending the key as api-key \(auto: an Azure OpenAI host\)/,
  )
  assert.doesNotMatch(notesOf({}), /sending the key as/)
})

test('each auth mode puts the key in its own header, and only there', () => {
  const headersOf = (auth: RunConfig['target']['auth'], extra: ConfigFlags = {}) =>
    resolveEndpoint(load({ auth, ...extra }), KEY, {}).headers
  assert.equal(headersOf('bearer').authorization, `Bearer ${KEY}`)
  assert.equal(headersOf('bearer')['x-api-key'], undefined)
  const azure = headersOf('api-key')
  assert.equal(azure['api-key'], KEY)
  assert.equal(azure.authorization, undefined)
  const anthropic = headersOf('x-api-key')
  assert.equal(anthropic['x-api-key'], KEY)
  assert.equal(anthropic['anthropic-version'], ANTHROPIC_VERSION)
  assert.equal(anthropic.authorization, undefined)
  const none = headersOf('none')
  assert.ok(!Object.values(none).some((value) => value.includes(KEY)), 'none sends no key')
  // The user's own anthropic-version wins over the default.
  assert.equal(
    headersOf('x-api-key', { header: ['anthropic-version: 2024-01-01'] })['anthropic-version'],
    '2024-01-01',
  )
  // The messages protocol always carries the version header Anthropic requires.
  assert.equal(headersOf('bearer', { protocol: 'messages' })['anthropic-version'], ANTHROPIC_VERSION)
})

test('Basic from user:password@: the URL loses them, the header and the secrets get them', () => {
  const endpoint = resolveEndpoint(
    load({ base_url: 'http://alice:pa%40ss-SECRET-77@127.0.0.1:9/v1' }),
    null,
    {},
  )
  assert.equal(
    endpoint.headers.authorization,
    `Basic ${Buffer.from('alice:pa@ss-SECRET-77').toString('base64')}`,
  )
  assert.equal(endpoint.url, 'http://127.0.0.1:9/v1/chat/completions')
  assert.ok(!endpoint.modelsUrl.includes('SECRET'))
  assert.ok(endpoint.secrets.includes('pa@ss-SECRET-77'))
  assert.ok(endpoint.secrets.includes(Buffer.from('alice:pa@ss-SECRET-77').toString('base64')))
  // With a key too, Basic keeps Authorization and the key is said not to be sent unless placed elsewhere.
  const notes: string[] = []
  const both = resolveEndpoint(load({ base_url: 'http://a:b-SECRET@127.0.0.1:9/v1' }), KEY, {}, (l) =>
    notes.push(l),
  )
  assert.match(both.headers.authorization ?? '', /^Basic /)
  assert.match(notes.join('\n'), /the key is not sent/)
  const placed = resolveEndpoint(
    load({ base_url: 'http://a:b-SECRET@127.0.0.1:9/v1', auth: 'api-key' }),
    KEY,
    {},
  )
  assert.equal(placed.headers['api-key'], KEY)
  assert.match(placed.headers.authorization ?? '', /^Basic /)
})

test("the base URL's query (Azure's api-version) follows the joined path", () => {
  assert.equal(
    joinUrl('https://t.openai.azure.com/openai/deployments/d?api-version=2024-10-21', '/chat/completions'),
    'https://t.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21',
  )
  assert.equal(joinUrl('https://h/v1/?a=1', '/v1/chat/completions'), 'https://h/v1/chat/completions?a=1')
  assert.equal(joinUrl('https://h/v1?a=1', '/x?b=2'), 'https://h/v1/x?b=2&a=1')
  const config = load({
    base_url: 'https://t.openai.azure.com/openai/deployments/d/?api-version=2024-10-21',
    endpoint: '/chat/completions',
  })
  assert.equal(
    config.target.base_url,
    'https://t.openai.azure.com/openai/deployments/d?api-version=2024-10-21',
  )
  const endpoint = resolveEndpoint(config, KEY, {})
  assert.equal(endpoint.path, '/openai/deployments/d/chat/completions?api-version=2024-10-21')
  assert.equal(endpoint.headers['api-key'], KEY, 'auto: api-key for an Azure OpenAI host')
})

test('--header lines and header tables merge across sources, names in lower case, a later value winning', () => {
  const dir = tempDir()
  const settings = join(dir, 'settings.json')
  writeFileSync(settings, JSON.stringify({ llm: { headers: { 'X-Team': 'file', 'X-Keep': 'yes' } } }))
  const toml = join(dir, 'config.toml')
  writeFileSync(
    toml,
    '[target.headers]\n"X-Toml" = "t"\n\n[target.env_headers]\n"X-From-Env" = "MY_HEADER_VAR"\n',
  )
  const config = load({ header: ['x-team: flag', 'X-Empty:'] }, [settings, toml])
  assert.deepEqual(config.target.headers, { 'x-team': 'flag', 'x-keep': 'yes', 'x-toml': 't', 'x-empty': '' })
  assert.deepEqual(config.target.env_headers, { 'x-from-env': 'MY_HEADER_VAR' })
  const endpoint = resolveEndpoint(config, null, { MY_HEADER_VAR: 'env-SECRET-value' })
  assert.equal(endpoint.headers['x-from-env'], 'env-SECRET-value')
  assert.ok(endpoint.secrets.includes('env-SECRET-value'), 'a value kept in the environment is a secret')
  assert.equal(endpoint.headers['x-team'], 'flag')
})

test('bad headers are configuration errors naming the file and key, never showing the value', () => {
  const dir = tempDir()
  const settings = join(dir, 'settings.json')
  writeFileSync(
    settings,
    JSON.stringify({ llm: { headers: { 'Bad Name': 'v', 'X-Token': 'tok-SECRET\u0001x', Host: 'h' } } }),
  )
  const message = issuesOf({}, [settings])
  assert.match(message, new RegExp(`${settings}: llm\\.headers\\["Bad Name"\\]: expected a header name`))
  assert.match(
    message,
    /llm\.headers\.X-Token: expected a header value without control characters.*got a value for "X-Token" \(not shown\)/,
  )
  assert.match(
    message,
    /llm\.headers\.Host: expected a header name that is not reserved \(host, content-length, .* are reserved: the HTTP client sets them itself\)/,
  )
  assert.ok(!message.includes('SECRET'))
  const flags = issuesOf({ header: ['Authorization Bearer sk-FLAG-SECRET', 'X-Ok: fine'] })
  assert.match(
    flags,
    /flags: --header\[0\]: expected "Name: value".*got a value without "Name:" \(not shown\)/,
  )
  assert.ok(!flags.includes('FLAG-SECRET'))
  assert.match(
    issuesOf({ auth: 'basic' as never }),
    /--auth: expected "auto", "bearer", "api-key", "x-api-key", "none", got "basic"/,
  )
})

test('secret-looking header names are redacted in the config digest and from every error', () => {
  for (const name of [
    'authorization',
    'x-api-key',
    'api-key',
    'x-auth-token',
    'cookie',
    'ocp-apim-subscription-key',
  ])
    assert.ok(isSecretHeaderName(name), name)
  for (const name of ['x-team', 'anthropic-version', 'openai-organization'])
    assert.ok(!isSecretHeaderName(name), name)
  const secret = 'hdr-SECRET-8080'
  const config = load({
    header: [`X-Gateway-Token: Bearer ${secret}`],
    base_url: 'http://u:pw-SECRET-1@127.0.0.1:9/v1',
  })
  const other = load({
    header: ['X-Gateway-Token: Bearer other-value'],
    base_url: 'http://u:pw-other@127.0.0.1:9/v1',
  })
  assert.equal(configDigest(config), configDigest(other), 'the digest does not depend on a secret')
  const endpoint = resolveEndpoint(config, null, {})
  assert.ok(endpoint.secrets.includes(secret), 'the credential after "Bearer" is a secret on its own')
})
