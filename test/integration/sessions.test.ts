// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { RunConfig } from '../../src/config/types.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

/**
 * Multi-turn sessions end to end: llmbench's workers against the simulator, through a loopback proxy
 * that keeps every request's messages and the reply text the simulator streamed back, so the test can
 * check what the server really saw: each turn's history is the previous turn's plus the reply it got.
 */

const SHAREGPT = fileURLToPath(
  new URL('../fixtures/sessions/sharegpt-openai-roles-multiturn.json', import.meta.url),
)

/** Prefill is slow per token (1 ms), so a history computed again shows in TTFT. */
const SIM: SimulatorOptions = {
  slots: 8,
  prefill_base_ms: 5,
  prefill_ms_per_token: 1,
  decode_base_ms: 2,
  decode_ms_per_seq: 0,
}

interface Message {
  role: string
  content: string
}

interface Seen {
  messages: Message[]
  reply: string
}

/** A proxy to `target` (host:port) that records each chat request's messages and its streamed reply text. */
async function recordingProxy(targetPort: number): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      const body = Buffer.concat(parts)
      const upstream = httpRequest(
        { host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          let text = ''
          answer.on('data', (chunk: Buffer) => {
            text += chunk.toString()
            res.write(chunk)
          })
          answer.on('end', () => {
            res.end()
            if (req.url?.endsWith('/chat/completions') && body.length > 0) {
              const sent = JSON.parse(body.toString()) as { messages: Message[] }
              seen.push({ messages: sent.messages, reply: streamedText(text) })
            }
          })
        },
      )
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/v1`, seen, server }
}

/** The content deltas of an SSE chat stream, joined. */
function streamedText(sse: string): string {
  let text = ''
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: {')) continue
    const delta = (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]
      ?.delta?.content
    if (typeof delta === 'string') text += delta
  }
  return text
}

async function run(config: RunConfig): Promise<{ result: BenchResult; records: RequestRecord[] }> {
  const outcome: RunOutcome = await runGradient({
    config,
    apiKey: null,
    outDir: config.run.out_dir as string,
    log: () => {},
    stop: new StopSignal(),
  })
  assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
  const { result } = outcome as Extract<RunOutcome, { kind: 'done' }>
  return { result, records: readRecords(join(config.run.out_dir as string, RECORDS_FILE)).records }
}

function sessionConfig(url: string, extra: Partial<RunConfig['workload']>): RunConfig {
  const config = testConfig(url, SIM_MODEL, {
    levels: [2],
    requests: 16,
    input_tokens: 100,
    output_tokens: 30,
    out_dir: tempDir(),
  })
  config.workload.sessions = true
  config.workload.turns = 4
  config.run.workers = 1
  Object.assign(config.workload, extra)
  return config
}

/** Every request with history: an earlier request sent exactly its history, and got its last assistant message as the reply. */
function assertHistoryGrows(seen: readonly Seen[]): number {
  let followUps = 0
  seen.forEach((request, i) => {
    const { messages } = request
    if (messages.filter((m) => m.role === 'user').length < 2) return
    followUps++
    const previous = messages.slice(0, -2)
    const reply = messages.at(-2) as Message
    assert.equal(reply.role, 'assistant')
    const earlier = seen
      .slice(0, i)
      .find((s) => JSON.stringify(s.messages) === JSON.stringify(previous) && s.reply === reply.content)
    assert.ok(
      earlier,
      `request ${i}: no earlier request sent its history and got "${reply.content.slice(0, 40)}..."`,
    )
  })
  return followUps
}

test('synthetic sessions: each turn carries the last reply, cached tokens rise with the turn, and the cache cuts TTFT', {
  timeout: 120_000,
}, async () => {
  const withCache = await startSimulator({ ...SIM, prefix_cache: true })
  const proxy = await recordingProxy(withCache.port)
  const withoutCache = await startSimulator(SIM)
  try {
    const config = sessionConfig(proxy.url, { shared_prefix: 64 })
    const cached = await run(config)
    const measured = cached.records.filter((r) => r.phase === 'measure')
    assert.equal(measured.length, 16)
    // 16 requests over 2 streams of 4-turn sessions: 4 whole sessions, each turn 0..3 once.
    const sessions = new Map<string, number[]>()
    for (const r of measured)
      sessions.set(r.session as string, [...(sessions.get(r.session as string) ?? []), r.turn as number])
    assert.equal(sessions.size, 4)
    for (const turns of sessions.values()) assert.deepEqual(turns, [0, 1, 2, 3])
    // What the server saw: 4 sessions × 3 follow-up turns, each extending an earlier request by its reply.
    assert.equal(assertHistoryGrows(proxy.seen), 12)
    const turns = cached.result.levels[0]?.turns ?? []
    assert.deepEqual(
      turns.map((t) => [t.turn, t.requests]),
      [
        [0, 4],
        [1, 4],
        [2, 4],
        [3, 4],
      ],
    )
    for (let t = 1; t < turns.length; t++) {
      const [before, now] = [turns[t - 1], turns[t]] as [
        NonNullable<(typeof turns)[number]>,
        NonNullable<(typeof turns)[number]>,
      ]
      assert.ok((now.input_tokens_mean as number) > (before.input_tokens_mean as number), 'the history grows')
      assert.ok(
        (now.cached_tokens_mean as number) > (before.cached_tokens_mean as number),
        `cached tokens rise at turn ${t}`,
      )
    }
    // Every session shares only the system prompt at turn 0; later turns find their own history.
    assert.ok((turns[3]?.cached_share as number) > (turns[0]?.cached_share as number))
    assert.ok(cached.result.levels[0]?.cache_effect?.some((bucket) => bucket.requests > 0))
    const summary = readFileSync(join(config.run.out_dir as string, 'summary.md'), 'utf8')
    assert.match(summary, /Sessions, per turn/)

    // The same sessions on a server without a prefix cache: the last turn computes its whole history.
    const uncached = await run(sessionConfig(withoutCache.url, { shared_prefix: 64 }))
    const last = (result: BenchResult) => result.levels[0]?.turns?.at(-1)?.ttft_p50_ms as number
    assert.equal(
      uncached.result.levels[0]?.turns?.at(-1)?.cached_share ?? null,
      null,
      'no cache, no cache figure',
    )
    assert.ok(
      last(cached.result) < last(uncached.result),
      `turn 3 TTFT p50: ${last(cached.result)} ms with the cache, ${last(uncached.result)} ms without`,
    )
  } finally {
    await new Promise((resolve) => proxy.server.close(resolve))
    await withCache.close()
    await withoutCache.close()
  }
})

test('ShareGPT sessions: only the dataset user turns are sent, each after the reply generated in this run', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...SIM, prefill_ms_per_token: 0, prefix_cache: true })
  const proxy = await recordingProxy(sim.port)
  try {
    const raw = JSON.parse(readFileSync(SHAREGPT, 'utf8')) as { conversations: Message[] }[]
    const config = sessionConfig(proxy.url, { dataset: SHAREGPT })
    config.load.levels = [1]
    config.load.requests_per_level = 1
    const { records } = await run(config)
    const measured = records.filter((r) => r.phase === 'measure')
    // One session claimed by the one stream, run to its end: the first conversation's user turns.
    const users = (raw[0] as { conversations: Message[] }).conversations.filter((m) => m.role === 'user')
    assert.deepEqual(
      measured.map((r) => r.turn),
      users.map((_, t) => t),
    )
    const last = proxy.seen.at(-1) as Seen
    assert.deepEqual(
      last.messages.filter((m) => m.role === 'user').map((m) => m.content),
      users.map((m) => m.content),
    )
    const datasetReplies = new Set(
      raw.flatMap((c) => c.conversations.filter((m) => m.role === 'assistant').map((m) => m.content)),
    )
    assert.ok(
      last.messages.filter((m) => m.role === 'assistant').every((m) => !datasetReplies.has(m.content)),
    )
    assert.equal(assertHistoryGrows(proxy.seen), users.length - 1)
  } finally {
    await new Promise((resolve) => proxy.server.close(resolve))
    await sim.close()
  }
})
