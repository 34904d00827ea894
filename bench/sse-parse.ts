/**
 * SSE parsing cost, measured side by side in one run (the machine is shared and noisy: compare the
 * ratios, not the absolute figures). The same recorded stream (openai_gpt4o_long_text.sse, 181
 * events) is fed in realistic reads to:
 *   - framing: our byte-level SseParser alone;
 *   - ours:    SseParser + interpretChunk (what the client does per event);
 *   - naive:   decode each read to a string, split on '\n' with a carry, JSON.parse every data line
 *              (the common client loop, e.g. aiter_lines + json.loads).
 * Rounds alternate between the contestants so drift hits all of them alike.
 *
 * Tried and dropped (issue 3): a "cheap scan" of each payload with substring searches instead of
 * JSON.parse. On Node 20 it was slower, not faster: V8's JSON.parse reads a ~250-byte chunk in
 * ~0.7 µs, while each String.includes costs ~0.15 µs and one combined regex ~0.4 µs, so checking
 * the dozen markers that make a scan safe (usage, finish, errors, tool calls, n > 1, whitespace)
 * cost 2.6 µs per chunk against 0.95 µs for the full parse and walk. Framing, not JSON, is where
 * bytes-level work paid (indexOf-based line search: 2x).
 *
 * Run: npm run bench:sse
 */
import { performance } from 'node:perf_hooks'
import { SseParser } from '../src/client/sse.js'
import { interpretChunk } from '../src/protocols/chunk.js'
import { readSseFixture } from '../test/helpers/fixtures.js'

const STREAM = readSseFixture('openai_gpt4o_long_text.sse')
const READ_BYTES = 256
const READS: Buffer[] = []
for (let offset = 0; offset < STREAM.length; offset += READ_BYTES)
  READS.push(STREAM.subarray(offset, offset + READ_BYTES))
const STREAMS_PER_ROUND = 400
const ROUNDS = 7

let sink = 0

function framingOnly(): void {
  const parser = new SseParser((event) => {
    sink += event.data.length
  })
  for (const read of READS) parser.push(read, 0)
  parser.end(0)
}

function ours(): void {
  const parser = new SseParser((event) => {
    if (interpretChunk(event.data).tokenBearing) sink++
  })
  for (const read of READS) parser.push(read, 0)
  parser.end(0)
}

function naive(): void {
  let carry = ''
  for (const read of READS) {
    const lines = (carry + read.toString('utf8')).split('\n')
    carry = lines.pop() ?? ''
    for (const line of lines) {
      if (!line.startsWith('data: ')) continue
      const payload = line.slice(6)
      if (payload === '[DONE]') continue
      const chunk = JSON.parse(payload) as { choices?: { delta?: { content?: string } }[] }
      if (chunk.choices?.[0]?.delta?.content) sink++
    }
  }
}

const contestants = { framing: framingOnly, ours, naive } as const
const eventsPerStream = 181
const best: Record<string, number> = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(contestants)) {
    const start = performance.now()
    for (let i = 0; i < STREAMS_PER_ROUND; i++) run()
    const seconds = (performance.now() - start) / 1000
    const eventsPerSecond = (STREAMS_PER_ROUND * eventsPerStream) / seconds
    best[name] = Math.max(best[name] ?? 0, eventsPerSecond)
  }
}
console.log(
  `SSE parsing, ${READS.length} reads of ${READ_BYTES} B per stream, best of ${ROUNDS} rounds (events/s, one core)`,
)
for (const [name, rate] of Object.entries(best)) {
  console.log(
    `  ${name.padEnd(8)} ${Math.round(rate).toLocaleString('en').padStart(12)}  x${(rate / (best.naive as number)).toFixed(2)} vs naive`,
  )
}
if (sink < 0) console.log(sink)
