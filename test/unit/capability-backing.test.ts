import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { SseParser } from '../../src/client/sse.js'
import type { Capability } from '../../src/protocols/capabilities.js'
import type { ChunkInfo } from '../../src/protocols/chunk.js'
import { PROTOCOLS, type Protocol } from '../../src/protocols/names.js'
import type { ChatMessage } from '../../src/protocols/prompt.js'
import { promptAudio, promptImage } from '../../src/protocols/prompt-images.js'
import type { BodyRequest } from '../../src/protocols/protocol-bodies.js'
import type { StructuredOutput } from '../../src/protocols/structured-parts.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'
import { audioTokens, DEFAULT_AUDIO_TOKENS_PER_S } from '../../src/sim/audio-tokens.js'
import { chunkFrames } from '../../src/sim/chunk-frames.js'
import { DEFAULT_IMAGE_PATCH_PX, imageTokens } from '../../src/sim/image-tokens.js'
import { eventWriter } from '../../src/sim/protocol-frames.js'
import { syntheticPng } from '../../src/workload/synthetic-png.js'
import { syntheticWav } from '../../src/workload/synthetic-wav.js'
import { PROTOCOL_FIXTURE_DIR, SSE_FIXTURE_DIR } from '../helpers/fixtures.js'

/**
 * A capability on a protocol's descriptor (`carries`) is a promise: the rest of llmbench sends an
 * image, a schema or a conversation to the protocols that claim it and refuses the others. This
 * walks every descriptor and holds each claim to what the descriptor itself builds and reads (its
 * body builder, the request fields a server reads that body with, its stream reader) and to what
 * the simulator answers it with; a capability not claimed is not half-built either.
 */

type Body = Record<string, unknown>

const PNG = promptImage('image/png', new Uint8Array(syntheticPng(56, 28, 1)))
const WAV = promptAudio(new Uint8Array(syntheticWav(1, 1)))
const TOOL = {
  name: 'capability_probe_tool',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}
const SCHEMA = { name: 'capability_probe_schema', schema: { type: 'object', title: 'capability-probe' } }

function built(protocol: Protocol, request: Partial<BodyRequest> = {}): Body {
  return protocolOf(protocol).body({
    model: 'm',
    prompt: 'describe',
    maxTokens: 4,
    stream: true,
    ignoreEos: false,
    ...request,
  })
}

/** Whether `value`, anywhere in `body`, is there as written (a deep search of the JSON). */
function holds(body: unknown, value: unknown): boolean {
  if (JSON.stringify(body) === JSON.stringify(value)) return true
  if (Array.isArray(body)) return body.some((item) => holds(item, value))
  if (typeof body === 'object' && body !== null) return Object.values(body).some((item) => holds(item, value))
  return false
}

/** Each SSE event of `bytes` as `protocol`'s reader reads it. */
function readStream(protocol: Protocol, bytes: Buffer | string): ChunkInfo[] {
  const interpreter = protocolOf(protocol).interpreter()
  const infos: ChunkInfo[] = []
  const parser = new SseParser((event) => infos.push(interpreter.event(event.event, event.data)))
  parser.push(Buffer.from(bytes), 0)
  parser.end(0)
  return infos
}

/** Recorded streams of real servers in which each protocol that claims reasoning shows it. */
const REASONING_RECORDINGS: Partial<Record<Protocol, string>> = {
  chat: `${PROTOCOL_FIXTURE_DIR}openrouter-chat-reasoning-comments.sse`,
  responses: `${PROTOCOL_FIXTURE_DIR}openai-responses-reasoning-summary.sse`,
  messages: `${PROTOCOL_FIXTURE_DIR}anthropic-messages-thinking.sse`,
}

/** Recorded streams of real servers in which each protocol that claims tools calls one. */
const TOOL_CALL_RECORDINGS: Partial<Record<Protocol, string>> = {
  chat: `${SSE_FIXTURE_DIR}openai_gpt4o_tool_call.sse`,
}

/** One reasoning token as the simulator streams it for `protocol`; null when it has no reasoning event for it. */
function simulatedReasoning(protocol: Protocol): string | null {
  const frames = chunkFrames(protocol, 'm', 1)
  if (frames !== null)
    return frames.reasoning === null ? null : `${frames.reasoning.prefix}thinking${frames.reasoning.suffix}`
  try {
    const writer = eventWriter({
      protocol,
      model: 'm',
      requestNo: 1,
      finishReason: 'stop',
      usage: { input: 1, output: 1, cached: 0, reasoning: 1 },
      inputs: 1,
    })
    return writer.open() + writer.token('thinking', 'reasoning')
  } catch {
    return null // no event writer: the protocol never streams (embeddings)
  }
}

/**
 * What claiming each capability must mean; typed by Capability, so a new capability does not
 * compile here until it says how its claim is held.
 */
const BACKING: Readonly<Record<Capability, (protocol: Protocol, claimed: boolean) => void>> = {
  images(protocol, claimed) {
    const body = built(protocol, { images: [PNG] })
    assert.equal(
      holds(body, PNG.base64) || holds(body, PNG.url),
      claimed,
      `${protocol}: the image in its body`,
    )
    if (claimed) {
      // 56 × 28 px: two 28-px patches, as the simulator charges them, read through the descriptor.
      const turns = protocolOf(protocol).request.prompt(body)
      assert.equal(imageTokens(turns, DEFAULT_IMAGE_PATCH_PX), 2, `${protocol}: the server counts the image`)
    }
  },
  audio(protocol, claimed) {
    const body = built(protocol, { audio: [WAV] })
    assert.equal(holds(body, WAV.base64), claimed, `${protocol}: the clip in its body`)
    if (claimed) {
      const turns = protocolOf(protocol).request.prompt(body)
      assert.equal(
        audioTokens(turns, DEFAULT_AUDIO_TOKENS_PER_S),
        25,
        `${protocol}: the server counts 1 s of audio`,
      )
    }
  },
  tools(protocol, claimed) {
    const structured: StructuredOutput = { schema: null, tools: [TOOL], toolChoice: 'auto' }
    assert.equal(
      holds(built(protocol, { structured }), TOOL.parameters),
      claimed,
      `${protocol}: the tool offered`,
    )
    if (claimed) {
      const recording = TOOL_CALL_RECORDINGS[protocol]
      assert.ok(
        recording !== undefined,
        `${protocol} claims tools: a recording of one of its tool calls is needed`,
      )
      const calls = readStream(protocol, readFileSync(recording)).flatMap((info) => info.toolCalls ?? [])
      assert.ok(
        calls.some((call) => call.name !== ''),
        `${protocol}: its reader reads the call's name`,
      )
      assert.ok(
        calls.some((call) => call.arguments !== ''),
        `${protocol}: its reader reads the call's arguments`,
      )
    }
  },
  structuredOutput(protocol, claimed) {
    const structured: StructuredOutput = { schema: SCHEMA, tools: null, toolChoice: 'auto' }
    assert.equal(
      holds(built(protocol, { structured }), SCHEMA.schema),
      claimed,
      `${protocol}: the schema asked for`,
    )
  },
  reasoning(protocol, claimed) {
    const simulated = simulatedReasoning(protocol)
    assert.equal(simulated !== null, claimed, `${protocol}: the simulator streams a reasoning phase`)
    if (!claimed || simulated === null) return
    const recording = REASONING_RECORDINGS[protocol]
    assert.ok(recording !== undefined, `${protocol} claims reasoning: a recording of its reasoning is needed`)
    for (const [source, stream] of [
      ['a recording', readFileSync(recording)],
      ['the simulator', simulated],
    ] as const) {
      const reasoning = readStream(protocol, stream).filter((info) => info.reasoningBearing)
      assert.ok(reasoning.length > 0, `${protocol}: its reader finds reasoning in ${source}`)
      for (const info of reasoning)
        assert.ok(
          (info.reasoningText ?? '') !== '',
          `${protocol}: reasoning text from ${source}, for its count`,
        )
    }
  },
  conversation(protocol, claimed) {
    const prompt: readonly ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'the earlier reply' },
      { role: 'user', content: 'second question' },
    ]
    const turns = protocolOf(protocol).request.prompt(built(protocol, { prompt }))
    const replyTurn = { role: 'assistant', content: 'the earlier reply' }
    assert.equal(
      Array.isArray(turns) &&
        turns.some((turn) => holds(turn, replyTurn.content) && holds(turn, replyTurn.role)),
      claimed,
      `${protocol}: the reply read back as a turn of its own`,
    )
  },
}

test('every capability a descriptor claims is backed by what it builds and reads; one it does not claim is not built', () => {
  for (const protocol of PROTOCOLS) {
    const { carries } = protocolOf(protocol)
    assert.deepEqual(
      Object.keys(carries).sort(),
      Object.keys(BACKING).sort(),
      `${protocol}: every capability held`,
    )
    for (const capability of Object.keys(BACKING) as Capability[])
      BACKING[capability](protocol, carries[capability])
  }
})

test("every protocol's streamed body asks for the token counts as its own request fields read it", () => {
  for (const protocol of PROTOCOLS) {
    const { request } = protocolOf(protocol)
    assert.equal(request.streamsUsage(built(protocol, { stream: true })), true, protocol)
  }
  // What is read is what was written: a chat body without stream_options does not ask.
  assert.equal(protocolOf('chat').request.streamsUsage(built('chat', { stream: false })), false)
})
