import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LiveRedactor, redact } from '../../src/client/redact.js'

const KEY = 'sk-DISTINCTIVE-key-4711'

test('redact removes credentials, not the words around them', () => {
  assert.equal(redact('basic authentication required'), 'basic authentication required')
  assert.equal(redact('Bearer authorization missing'), 'Bearer authorization missing')
  assert.equal(redact('got Basic dXNlcjpwYXNz here'), 'got Basic [redacted] here')
  // A 401's challenge names its parameters after the scheme: they are not credentials.
  assert.equal(
    redact('www-authenticate: Bearer realm="api", error="invalid_token"'),
    'www-authenticate: Bearer realm="api", error="invalid_token"',
  )
  assert.equal(
    redact('Basic realm="Restricted", charset="UTF-8"'),
    'Basic realm="Restricted", charset="UTF-8"',
  )
  assert.equal(redact('{"authorization":"Basic YWxpY2U6czM="}'), '{"authorization":"Basic [redacted]"}')
  assert.equal(redact(`Authorization: Bearer ${KEY}`), 'Authorization: Bearer [redacted]')
  assert.equal(
    redact(`Incorrect API key provided: ${KEY}.`, [KEY]),
    'Incorrect API key provided: [redacted].',
  )
})

test('live text never shows the key, also when it is split over pieces, and loses nothing else', () => {
  const text = `echo: ${KEY} and again ${KEY}!`
  for (const size of [1, 2, 5, 7, 11, text.length]) {
    let out = ''
    const live = new LiveRedactor([KEY], (piece) => {
      out += piece
    })
    for (let i = 0; i < text.length; i += size) live.push(text.slice(i, i + size))
    live.end()
    assert.equal(out, 'echo: [redacted] and again [redacted]!', `pieces of ${size}`)
  }
  let plain = ''
  const none = new LiveRedactor([], (piece) => {
    plain += piece
  })
  none.push('abc')
  assert.equal(plain, 'abc', 'without a key nothing is held back')
})
