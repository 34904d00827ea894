import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags } from '../../src/config/types.js'
import {
  type Capability,
  eitherOf,
  type ProtocolCarries,
  protocolsCarrying,
} from '../../src/protocols/capabilities.js'
import { PROTOCOLS, type Protocol } from '../../src/protocols/names.js'
import { promptAudio, promptImage } from '../../src/protocols/prompt-images.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'
import { buildBody } from '../../src/workload/request-body.js'
import { configErrorMessage } from '../helpers/config-error.js'

const NONE: ProtocolCarries = {
  images: false,
  audio: false,
  tools: false,
  structuredOutput: false,
  reasoning: false,
  conversation: false,
}

/** What each protocol carries today, written out: a change to the table is a change to this test. */
const EXPECTED: Record<Protocol, ProtocolCarries> = {
  chat: {
    images: true,
    audio: true,
    tools: true,
    structuredOutput: true,
    reasoning: true,
    conversation: true,
  },
  completions: NONE,
  responses: { ...NONE, images: true, reasoning: true, conversation: true },
  messages: { ...NONE, images: true, reasoning: true, conversation: true },
  embeddings: NONE,
}

test("each protocol's descriptor says what it carries", () => {
  for (const protocol of PROTOCOLS)
    assert.deepEqual(protocolOf(protocol).carries, EXPECTED[protocol], protocol)
})

test('the protocols carrying a capability are listed in PROTOCOLS order', () => {
  assert.deepEqual(protocolsCarrying('images'), ['chat', 'responses', 'messages'])
  assert.deepEqual(protocolsCarrying('audio'), ['chat'])
  assert.deepEqual(protocolsCarrying('conversation'), ['chat', 'responses', 'messages'])
})

test('names are said as a reader says them', () => {
  assert.equal(eitherOf(['chat']), 'chat')
  assert.equal(eitherOf(['chat', 'responses']), 'chat or responses')
  assert.equal(eitherOf(['chat', 'responses', 'messages']), 'chat, responses or messages')
})

/** The settings that need a capability of the protocol, each with a value the config takes. */
const NEEDS: readonly { capability: Capability; flags: ConfigFlags; says: RegExp }[] = [
  { capability: 'images', flags: { images: '1x64x64' }, says: /expected images with the (.+) protocol,/ },
  { capability: 'audio', flags: { audio: '1x5' }, says: /expected audio with the (.+) protocol,/ },
  {
    capability: 'structuredOutput',
    flags: { response_schema: 'builtin' },
    says: /expected response_schema and tools with the (.+) protocol,/,
  },
  {
    capability: 'tools',
    flags: { tools: 'builtin' },
    says: /expected response_schema and tools with the (.+) protocol,/,
  },
]

test('the config refuses a setting on a protocol that does not carry it, naming the protocols that do', () => {
  for (const { capability, flags, says } of NEEDS) {
    const carriers = protocolsCarrying(capability)
    for (const protocol of PROTOCOLS.filter((p) => !carriers.includes(p))) {
      const message = configErrorMessage([], { base_url: 'http://a.test', model: 'm', protocol, ...flags })
      assert.equal(message.match(says)?.[1], eitherOf(carriers), `${capability} on ${protocol}: ${message}`)
    }
    for (const protocol of carriers)
      assert.doesNotThrow(() =>
        loadRunConfig({
          configFiles: [],
          flags: { base_url: 'http://a.test', model: 'm', protocol, ...flags },
        }),
      )
  }
})

test('a body with images or audio for a protocol without those parts is refused, naming the ones with them', () => {
  const png = promptImage('image/png', new Uint8Array([1, 2, 3]))
  const clip = promptAudio(new Uint8Array([1, 2, 3, 4]))
  for (const protocol of PROTOCOLS) {
    const options = { model: 'm', endpoint: protocolOf(protocol).path, protocol, stream: false }
    const { images, audio } = protocolOf(protocol).carries
    const sendImages = () => buildBody(options, 'describe', 4, [png])
    const sendAudio = () => buildBody(options, 'describe', 4, [], [clip])
    if (images) assert.doesNotThrow(sendImages, protocol)
    else assert.throws(sendImages, { message: /no image parts: send images to chat, responses or messages$/ })
    if (audio) assert.doesNotThrow(sendAudio, protocol)
    else assert.throws(sendAudio, { message: /no audio parts: send audio to chat$/ })
  }
})

test('a body with a response schema or tools for a protocol without those fields is refused, naming the ones with them', () => {
  const schema = { name: 'answer', schema: { type: 'object' } }
  const tools = [{ name: 'lookup', parameters: { type: 'object' } }]
  for (const protocol of PROTOCOLS) {
    const options = { model: 'm', endpoint: protocolOf(protocol).path, protocol, stream: false }
    const { structuredOutput, tools: carriesTools } = protocolOf(protocol).carries
    const sendSchema = () =>
      buildBody({ ...options, structured: { schema, tools: null, toolChoice: 'auto' } }, 'hi', 4)
    const sendTools = () =>
      buildBody({ ...options, structured: { schema: null, tools, toolChoice: 'auto' } }, 'hi', 4)
    if (structuredOutput) assert.doesNotThrow(sendSchema, protocol)
    else
      assert.throws(sendSchema, {
        message: `the ${protocol} protocol has no response format: send a response schema to ${eitherOf(protocolsCarrying('structuredOutput'))}`,
      })
    if (carriesTools) assert.doesNotThrow(sendTools, protocol)
    else
      assert.throws(sendTools, {
        message: `the ${protocol} protocol has no tools: send tools to ${eitherOf(protocolsCarrying('tools'))}`,
      })
  }
})
