import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PROTOCOLS, protocolOfEndpoint } from '../../src/protocols/names.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'

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
