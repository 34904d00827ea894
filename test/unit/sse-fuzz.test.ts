import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { type SseEvent, SseParser } from '../../src/client/sse.js'
import { interpretChunk } from '../../src/protocols/chunk.js'
import { readSseFixture, sseFixtureNames } from '../helpers/fixtures.js'

function parse(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const events: SseEvent[] = []
  const parser = new SseParser((event) => events.push(event))
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let start = 0
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.push(buffer.subarray(start, cut), 0)
    start = cut
  }
  parser.push(buffer.subarray(start), 0)
  parser.end(0)
  return events
}

test('property: any split of any recorded stream parses to the same events', () => {
  const fixtures = sseFixtureNames().map((name) => readSseFixture(name))
  const whole = fixtures.map((bytes) => parse(bytes, []))
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: fixtures.length - 1 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
      (index, fractions) => {
        const bytes = fixtures[index] as Buffer
        const cuts = fractions.map((f) => Math.floor(f * bytes.length))
        assert.deepEqual(parse(bytes, cuts), whole[index])
      },
    ),
    { numRuns: 400, seed: 20261202 },
  )
})

test('property: random bytes, split anywhere, never throw, and every payload interprets without throwing', () => {
  const alphabet = fc.constantFrom(
    ...'data: {}[]":,\r\n\n\n event error id retry \u00e9\u00ff'.split('').map((c) => c.charCodeAt(0) & 0xff),
    0xc3,
    0xa9,
    0xe2,
    0x82,
  )
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 600 }),
        fc.array(alphabet, { maxLength: 600 }).map((a) => Uint8Array.from(a)),
      ),
      fc.array(fc.nat({ max: 600 }), { maxLength: 20 }),
      (bytes, cuts) => {
        const events = parse(
          bytes,
          cuts.map((c) => Math.min(c, bytes.length)),
        )
        for (const event of events) interpretChunk(event.data)
      },
    ),
    { numRuns: 1500, seed: 7 },
  )
})
