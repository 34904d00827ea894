import assert from 'node:assert/strict'
import { test } from 'node:test'
import { promptImage, promptImageUrl } from '../../src/protocols/prompt-images.js'
import {
  chatBody,
  completionsBody,
  messagesBody,
  responsesBody,
} from '../../src/protocols/protocol-bodies.js'
import { buildBody } from '../../src/workload/request-body.js'

const png = promptImage('image/png', new Uint8Array([1, 2, 3]))
const base = { model: 'm', prompt: 'describe', maxTokens: 8, stream: true, ignoreEos: false }

test('a prompt image is encoded once: base64 and a data URI', () => {
  assert.equal(png.base64, 'AQID')
  assert.equal(png.url, 'data:image/png;base64,AQID')
})

test('chat: the user turn becomes text then image_url parts', () => {
  const body = chatBody({ ...base, images: [png, promptImageUrl('https://example.test/a.jpg')] })
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'describe' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AQID' } },
        { type: 'image_url', image_url: { url: 'https://example.test/a.jpg' } },
      ],
    },
  ])
})

test('responses: input_text then input_image with the URL as a string', () => {
  const body = responsesBody({ ...base, images: [png] })
  assert.deepEqual(body.input, [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'describe' },
        { type: 'input_image', image_url: 'data:image/png;base64,AQID' },
      ],
    },
  ])
})

test('messages: image blocks with a base64 source; the system prompt still lifted out', () => {
  const prompt = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'first' },
    { role: 'assistant' as const, content: 'ok' },
    { role: 'user' as const, content: 'describe' },
  ]
  const body = messagesBody({ ...base, prompt, images: [png] })
  assert.equal(body.system, 'be brief')
  assert.deepEqual(body.messages, [
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'ok' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'describe' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AQID' } },
      ],
    },
  ])
})

test('without images every body is as before: plain string contents', () => {
  assert.deepEqual(chatBody(base).messages, [{ role: 'user', content: 'describe' }])
  assert.equal(responsesBody(base).input, 'describe')
  assert.deepEqual(messagesBody({ ...base, images: [] }).messages, [{ role: 'user', content: 'describe' }])
  assert.equal(completionsBody(base).prompt, 'describe')
})

test('buildBody puts images in image protocols and refuses them for completions and embeddings', () => {
  const options = { model: 'm', endpoint: '/v1/chat/completions', stream: false }
  const chat = JSON.parse(buildBody(options, 'describe', 4, [png]).toString())
  assert.equal(chat.messages[0].content[1].image_url.url, png.url)
  for (const endpoint of ['/v1/completions', '/v1/embeddings']) {
    assert.throws(() => buildBody({ ...options, endpoint }, 'describe', 4, [png]), /has no image parts/)
    assert.doesNotThrow(() => buildBody({ ...options, endpoint }, 'describe', 4))
  }
})
