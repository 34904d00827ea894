import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  bypassed,
  type ProxyEnv,
  ProxySettingError,
  proxyEnvOf,
  proxyFor,
  proxyMetaOf,
  proxyNote,
  proxySecrets,
} from '../../src/client/proxy.js'

const BOTH: ProxyEnv = { http: 'http://proxy:3128', https: 'http://secure-proxy:8080', noProxy: '' }

test('the lower-case variable wins where both are set; an empty lower-case one turns the proxy off', () => {
  assert.deepEqual(proxyEnvOf({ http_proxy: 'http://a:1', HTTP_PROXY: 'http://b:2' }), {
    http: 'http://a:1',
    https: null,
    noProxy: '',
  })
  assert.deepEqual(proxyEnvOf({ HTTPS_PROXY: 'http://b:2', NO_PROXY: 'x', no_proxy: 'y' }), {
    http: null,
    https: 'http://b:2',
    noProxy: 'y',
  })
  assert.equal(proxyEnvOf({ http_proxy: '', HTTP_PROXY: 'http://b:2' }), null)
  assert.equal(proxyEnvOf({ NO_PROXY: '*' }), null)
})

test('each scheme has its own proxy, never the other one (as curl)', () => {
  assert.equal(proxyFor('http://api.example.com/v1', BOTH)?.host, 'proxy')
  assert.equal(proxyFor('https://api.example.com/v1', BOTH)?.host, 'secure-proxy')
  assert.equal(proxyFor('https://api.example.com/v1', { ...BOTH, https: null }), null)
  assert.equal(proxyFor('http://api.example.com/v1', { ...BOTH, http: null }), null)
  assert.equal(proxyFor('http://api.example.com/v1', null), null)
})

test('a proxy URL without a scheme is http; its port defaults to 80; only http:// proxies', () => {
  const route = proxyFor('http://h/', { ...BOTH, http: 'proxy.corp' })
  assert.deepEqual(route, { host: 'proxy.corp', port: 80, authorization: null, origin: 'http://proxy.corp' })
  assert.throws(() => proxyEnvOf({ https_proxy: 'socks5://p:1080' }), ProxySettingError)
  assert.throws(
    () => proxyEnvOf({ https_proxy: 'https://p:443' }),
    /https_proxy: https:\/\/ proxies are not supported/,
  )
  assert.throws(() => proxyEnvOf({ HTTP_PROXY: 'http://[bad' }), /HTTP_PROXY: not a URL/)
})

test("the proxy URL's credentials become Proxy-Authorization: Basic, decoded first", () => {
  const route = proxyFor('http://h/', { ...BOTH, http: 'http://us%40er:p%3Ass@proxy:3128' })
  assert.equal(route?.authorization, `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`)
  assert.equal(route?.origin, 'http://proxy:3128')
  assert.deepEqual(proxyMetaOf('https://h/', { ...BOTH, https: 'http://u:pw12@p:1' }), {
    url: 'http://p:1',
    credentials: true,
    via: 'CONNECT',
  })
})

test('the secrets to scrub: the password (as written and decoded), user:password, the Basic token', () => {
  const secrets = proxySecrets({ http: 'http://u:p%40ss-word@p:1', https: null, noProxy: '' })
  assert.deepEqual(secrets, [
    'p%40ss-word',
    'p@ss-word',
    'u:p%40ss-word',
    Buffer.from('u:p@ss-word').toString('base64'),
  ])
  assert.deepEqual(proxySecrets({ http: 'http://p:1', https: null, noProxy: '' }), [])
})

test('NO_PROXY: names cover their subdomains, a leading dot or *. is the same, case does not matter', () => {
  const list = 'localhost, .internal.corp,*.svc.local ,Example.COM'
  assert.ok(bypassed('localhost', 80, list))
  assert.ok(bypassed('api.internal.corp', 443, list))
  assert.ok(bypassed('internal.corp', 443, list))
  assert.ok(bypassed('a.b.svc.local', 80, list))
  assert.ok(bypassed('www.example.com', 80, list))
  assert.ok(!bypassed('notexample.com', 80, list))
  assert.ok(!bypassed('example.com.evil', 80, list))
  assert.ok(bypassed('anything', 1, '*'))
  assert.ok(!bypassed('anything', 1, ''))
})

test('NO_PROXY: ports, IPv4 and IPv6 addresses (exact, no CIDR)', () => {
  assert.ok(bypassed('10.0.0.5', 8000, '10.0.0.5'))
  assert.ok(!bypassed('10.0.0.50', 8000, '10.0.0.5'))
  assert.ok(!bypassed('10.0.0.5', 8000, '10.0.0.0/8'))
  assert.ok(bypassed('host', 8000, 'host:8000'))
  assert.ok(!bypassed('host', 8001, 'host:8000'))
  assert.ok(bypassed('[::1]', 8000, '::1'))
  assert.ok(bypassed('::1', 8000, '[::1]:8000'))
  assert.ok(!bypassed('::1', 9000, '[::1]:8000'))
  assert.equal(proxyFor('http://10.0.0.5:8000/v1', { ...BOTH, noProxy: '10.0.0.5:8000' }), null)
})

test('the run description says which proxy the requests go through, or why none', () => {
  assert.equal(
    proxyNote('https://api.example.com/v1/chat/completions', { ...BOTH, https: 'http://u:pw12@p:1' }),
    'proxy: http://p:1 (with credentials), a CONNECT tunnel to api.example.com (--no-proxy to connect directly)',
  )
  assert.equal(
    proxyNote('http://gpu:8000/v1', BOTH),
    'proxy: http://proxy:3128, absolute-form requests (--no-proxy to connect directly)',
  )
  assert.equal(
    proxyNote('http://gpu:8000/v1', { ...BOTH, noProxy: 'gpu' }),
    'proxy: none, NO_PROXY names gpu:8000',
  )
  assert.equal(
    proxyNote('http://gpu:8000/v1', { ...BOTH, http: null }),
    'proxy: none for http (only the https proxy variable is set)',
  )
  assert.equal(proxyNote('http://gpu:8000/v1', null), null)
})
