import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PROTOCOLS, protocolOfEndpoint } from '../../src/protocols/names.js'
import { protocolOf, protocolServedAt } from '../../src/protocols/wire-protocol.js'

test("each protocol's descriptor is its own, and its path names it back", () => {
  for (const protocol of PROTOCOLS) {
    const descriptor = protocolOf(protocol)
    assert.equal(descriptor.name, protocol)
    assert.equal(protocolOfEndpoint(descriptor.path), protocol, descriptor.path)
  }
})

test('embeddings neither stream nor generate; every other protocol does both', () => {
  for (const protocol of PROTOCOLS) {
    const { streams, generatesTokens } = protocolOf(protocol)
    assert.equal(streams, protocol !== 'embeddings', `${protocol} streams`)
    assert.equal(generatesTokens, protocol !== 'embeddings', `${protocol} generates tokens`)
  }
})

test('a target or result from before protocols is read as chat completions', () => {
  assert.equal(protocolOf(undefined), protocolOf('chat'))
})

test('a server finds the protocol at its path, and no protocol elsewhere', () => {
  for (const protocol of PROTOCOLS) assert.equal(protocolServedAt(protocolOf(protocol).path), protocol)
  assert.equal(protocolServedAt('/v1/models'), null)
  assert.equal(protocolServedAt(undefined), null)
})

test("a server reads back the prompt and the output length each protocol's body was written with", () => {
  const prompt = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hello' },
  ] as const
  for (const protocol of PROTOCOLS) {
    const { body, request, generatesTokens } = protocolOf(protocol)
    const written = body({ model: 'm', prompt, maxTokens: 7, stream: true, ignoreEos: false })
    assert.equal(request.maxTokens(written), generatesTokens ? 7 : 1, protocol)
    assert.equal(request.inputs(written), 1, protocol)
    const read = request.prompt(written)
    const text = request.countsTurns
      ? (read as { content: string }[]).map((turn) => turn.content).join('\n')
      : read
    assert.equal(text, 'be brief\nhello', protocol)
  }
})
