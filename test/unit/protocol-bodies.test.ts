import assert from 'node:assert/strict'
import { test } from 'node:test'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'
import { buildBody } from '../../src/workload/request-body.js'
import { testConfig } from '../helpers/run-config.js'

const parse = (body: Buffer): unknown => JSON.parse(body.toString('utf8'))
const CONVERSATION = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello' },
  { role: 'user', content: 'Again' },
] as const

test('Responses API body: input (text or the conversation), max_output_tokens, stream; no stream_options', () => {
  const options = { model: 'm', endpoint: '/v1/responses', stream: true, ignoreEos: true }
  assert.deepEqual(parse(buildBody(options, 'Hi', 7)), {
    model: 'm',
    input: 'Hi',
    max_output_tokens: 7,
    stream: true,
  })
  assert.deepEqual((parse(buildBody(options, CONVERSATION, 7)) as { input: unknown }).input, CONVERSATION)
})

test('Anthropic Messages body: the system prompt lifted out of the messages, max_tokens, stream', () => {
  const options = { model: 'm', endpoint: '/gateway/anything', protocol: 'messages' as const, stream: false }
  assert.deepEqual(parse(buildBody(options, CONVERSATION, 9)), {
    model: 'm',
    max_tokens: 9,
    system: 'Be brief.',
    messages: CONVERSATION.slice(1),
    stream: false,
  })
  assert.deepEqual(parse(buildBody(options, 'Hi', 9)), {
    model: 'm',
    max_tokens: 9,
    messages: [{ role: 'user', content: 'Hi' }],
    stream: false,
  })
})

test('embeddings body: the text as input; no max_tokens, no stream', () => {
  const options = { model: 'm', endpoint: '/v1/embeddings', stream: true }
  assert.deepEqual(parse(buildBody(options, CONVERSATION, 9)), {
    model: 'm',
    input: 'Be brief.\nHi\nHello\nAgain',
  })
})

test('chat and completions bodies as before; the protocol, when given, wins over the endpoint path', () => {
  const chat = parse(buildBody({ model: 'm', endpoint: '/v1/chat/completions', stream: true }, 'Hi', 3))
  assert.deepEqual(chat, {
    model: 'm',
    messages: [{ role: 'user', content: 'Hi' }],
    max_tokens: 3,
    stream: true,
    stream_options: { include_usage: true },
  })
  const legacy = parse(
    buildBody({ model: 'm', endpoint: '/proxy', protocol: 'completions', stream: false }, 'Hi', 3),
  )
  assert.deepEqual(legacy, { model: 'm', prompt: 'Hi', max_tokens: 3, stream: false })
})

test('an embeddings endpoint is never streamed, whatever the stream setting', () => {
  const config = testConfig('http://127.0.0.1:1/v1', 'm', { levels: [1], out_dir: '/tmp/x' })
  config.target.protocol = 'embeddings'
  config.target.endpoint = '/v1/embeddings'
  const endpoint = resolveEndpoint(config, null)
  assert.equal(endpoint.stream, false)
  assert.equal(endpoint.body.stream, false)
  assert.equal(endpoint.protocol, 'embeddings')
  assert.equal(endpoint.headers.accept, 'application/json')
  config.target.protocol = 'messages'
  assert.equal(resolveEndpoint(config, null).stream, true)
})
