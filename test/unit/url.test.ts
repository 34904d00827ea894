import assert from 'node:assert/strict'
import { test } from 'node:test'
import { joinUrl, trimTrailingSlashes } from '../../src/config/url.js'

test('joinUrl: a base ending in /v1 absorbs the endpoint /v1', () => {
  assert.equal(joinUrl('https://h/api/v1', '/v1/chat/completions'), 'https://h/api/v1/chat/completions')
  assert.equal(joinUrl('http://127.0.0.1:8000/v1', '/v1/models'), 'http://127.0.0.1:8000/v1/models')
})

test('joinUrl: a base without /v1 gets the endpoint as written', () => {
  assert.equal(joinUrl('https://h/api', '/v1/chat/completions'), 'https://h/api/v1/chat/completions')
  assert.equal(joinUrl('https://h', '/v1/completions'), 'https://h/v1/completions')
})

test('joinUrl: trailing slashes on the base are ignored', () => {
  assert.equal(joinUrl('https://h/api/v1/', '/v1/chat/completions'), 'https://h/api/v1/chat/completions')
  assert.equal(joinUrl('https://h/api//', '/v1/chat/completions'), 'https://h/api/v1/chat/completions')
  assert.equal(joinUrl('https://h/', '/v1/models'), 'https://h/v1/models')
})

test('joinUrl: an endpoint without /v1 is appended as is', () => {
  assert.equal(joinUrl('https://h/api/v1', '/chat/completions'), 'https://h/api/v1/chat/completions')
  assert.equal(joinUrl('https://h/api', '/chat/completions'), 'https://h/api/chat/completions')
})

test('joinUrl: only a whole /v1 segment counts', () => {
  // "/v1beta" is not "/v1", and a base ending in "/apiv1" does not end in the /v1 segment.
  assert.equal(joinUrl('https://h/v1', '/v1beta/models'), 'https://h/v1/v1beta/models')
  assert.equal(joinUrl('https://h/apiv1', '/v1/models'), 'https://h/apiv1/v1/models')
  assert.equal(joinUrl('https://h/v1', '/v1'), 'https://h/v1')
})

test('joinUrl: an endpoint missing its leading slash still gets exactly one', () => {
  assert.equal(joinUrl('https://h/api', 'v1/models'), 'https://h/api/v1/models')
})

test('trimTrailingSlashes', () => {
  assert.equal(trimTrailingSlashes('https://h/api///'), 'https://h/api')
  assert.equal(trimTrailingSlashes('https://h/api'), 'https://h/api')
})
