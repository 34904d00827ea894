import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PROTOCOLS } from '../../src/protocols/names.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'
import { chunkFrames } from '../../src/sim/chunk-frames.js'
import { eventWriter, type ProtocolReply } from '../../src/sim/protocol-frames.js'

const reply = (protocol: ProtocolReply['protocol']): ProtocolReply => ({
  protocol,
  model: 'm',
  requestNo: 1,
  finishReason: 'stop',
  usage: { input: 3, output: 2, cached: 0, reasoning: 0 },
  inputs: 1,
})

/** Whether the simulator has an event writer of `protocol`'s own. */
function writesEvents(protocol: ProtocolReply['protocol']): boolean {
  try {
    eventWriter(reply(protocol))
    return true
  } catch {
    return false
  }
}

test('the simulator answers every streaming protocol in one format: OpenAI chunks or events of its own', () => {
  for (const protocol of PROTOCOLS) {
    const chunks = chunkFrames(protocol, 'm', 1) !== null
    const events = writesEvents(protocol)
    assert.ok(!(chunks && events), `${protocol}: both chunks and events`)
    if (protocolOf(protocol).streams) assert.ok(chunks || events, `${protocol}: streams, but in no format`)
  }
})

test("a chunk format has a reasoning field exactly when its protocol's descriptor says it carries reasoning", () => {
  for (const protocol of PROTOCOLS) {
    const frames = chunkFrames(protocol, 'm', 1)
    if (frames !== null)
      assert.equal(frames.reasoning !== null, protocolOf(protocol).carries.reasoning, protocol)
  }
})

test('the chunk formats keep the OpenAI object names', () => {
  assert.match(
    chunkFrames('chat', 'm', 7)?.tokenPrefix ?? '',
    /"id":"chatcmpl-llmbench-7","object":"chat.completion.chunk"/,
  )
  assert.equal(chunkFrames('chat', 'm', 7)?.object, 'chat.completion')
  assert.match(
    chunkFrames('completions', 'm', 7)?.tokenPrefix ?? '',
    /"id":"cmpl-llmbench-7","object":"text_completion"/,
  )
  assert.equal(chunkFrames('completions', 'm', 7)?.object, 'text_completion')
})
