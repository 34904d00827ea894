import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import type { RunConfig } from '../../src/config/types.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import { sessionTables } from '../../src/report/session-tables.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

/**
 * Tool calls inside sessions and jobs (--tools with --sessions or --jobs), end to end on the
 * simulator, which answers a forced call with a call: through a loopback proxy that keeps each
 * request's messages, the test checks what an agent would send next (the assistant turn with its
 * calls, then one tool message per call answering it by id) and that the server counted the
 * tools' results as prompt.
 */

interface Message {
  role: string
  content: string | null
  tool_calls?: { id?: string; type: string; function: { name: string; arguments: string } }[]
  tool_call_id?: string
}

/** A proxy to the simulator that keeps each chat request's messages, in arrival order. */
async function recordingProxy(
  targetPort: number,
): Promise<{ url: string; seen: Message[][]; server: Server }> {
  const seen: Message[][] = []
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      const body = Buffer.concat(parts)
      if (req.url?.endsWith('/chat/completions') && body.length > 0)
        seen.push((JSON.parse(body.toString()) as { messages: Message[] }).messages)
      const upstream = httpRequest(
        { host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/v1`, seen, server }
}

/** One function with a free string (the simulator's words go there) and an enum, both required. */
const LOOKUP = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'Look something up',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' }, scope: { type: 'string', enum: ['web', 'docs'] } },
      required: ['query', 'scope'],
      additionalProperties: false,
    },
  },
}

const SIM: SimulatorOptions = { slots: 4, prefill_base_ms: 1, prefill_ms_per_token: 0, decode_base_ms: 1 }

async function runOn(
  sim: SimulatorOptions,
  configure: (config: RunConfig) => void,
): Promise<{ result: BenchResult; records: RequestRecord[]; seen: Message[][] }> {
  const simulator = await startSimulator(sim)
  const proxy = await recordingProxy(simulator.port)
  try {
    const dir = tempDir()
    const toolsFile = join(dir, 'tools.json')
    writeFileSync(toolsFile, JSON.stringify([LOOKUP]))
    const config = testConfig(proxy.url, SIM_MODEL, {
      levels: [1],
      requests: 3,
      input_tokens: 40,
      output_tokens: 12,
      out_dir: join(dir, 'run'),
      preflight: false,
    })
    config.load.control = false
    Object.assign(config.workload, { sessions: true, turns: 3, tools: toolsFile, tool_choice: 'required' })
    configure(config)
    const outcome: RunOutcome = await runGradient({
      config,
      apiKey: null,
      outDir: config.run.out_dir as string,
      log: () => {},
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
    const { result } = outcome as Extract<RunOutcome, { kind: 'done' }>
    const { records } = readRecords(join(config.run.out_dir as string, RECORDS_FILE))
    return { result, records: records.filter((r) => r.phase === 'measure'), seen: proxy.seen }
  } finally {
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()))
    await simulator.close()
  }
}

/** ceil(chars / 4) of the contents and the calls' names and arguments: the simulator's default prompt count. */
function simPromptTokens(messages: readonly Message[]): number {
  let chars = 0
  for (const m of messages) {
    chars += (m.content ?? '').length
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length
  }
  return Math.ceil(chars / 4)
}

function byTurn(records: readonly RequestRecord[]): RequestRecord[] {
  return [...records].sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0))
}

for (const stream of [true, false]) {
  test(`a 3-turn session with forced tool calls (${stream ? 'streamed' : 'not streamed'}): each later turn answers the calls by id, and the results count as prompt`, async () => {
    const { result, records, seen } = await runOn(SIM, (config) => {
      config.client.stream = stream
    })
    assert.equal(seen.length, 3, 'one session of 3 turns')
    const turns = byTurn(records)
    assert.deepEqual(
      turns.map((r) => [r.turn, r.error, r.tool_calls, r.tool_call_source, r.tool_check]),
      [0, 1, 2].map((t) => [t, null, 1, 'deltas', 'valid']),
    )
    for (const t of [1, 2]) {
      const messages = seen[t] as Message[]
      const before = seen[t - 1] as Message[]
      // The request extends the previous one by the assistant's call and the tool's result, no user message.
      assert.deepEqual(messages.slice(0, before.length), before, `turn ${t} extends turn ${t - 1}'s history`)
      const added = messages.slice(before.length)
      assert.deepEqual(
        added.map((m) => m.role),
        ['assistant', 'tool'],
        `turn ${t} adds: ${JSON.stringify(added)}`,
      )
      const [assistant, tool] = added as [Message, Message]
      const call = assistant.tool_calls?.[0]
      assert.ok(call !== undefined && assistant.tool_calls?.length === 1)
      assert.match(call.id ?? '', /^call_sim_\d+$/, 'the id the server gave')
      assert.equal(call.function.name, 'lookup')
      const args = JSON.parse(call.function.arguments) as { query: string; scope: string }
      assert.equal(args.scope, 'web')
      assert.ok(args.query.trim().split(' ').length >= 1)
      assert.equal(tool.tool_call_id, call.id, 'the result answers the call')
      assert.ok((tool.content ?? '').length > 0, 'the tool result carries the turn input')
      // The server's prompt count is the history's, tool calls and results included.
      const record = turns[t] as RequestRecord
      assert.equal(record.input_tokens, simPromptTokens(messages))
      const previous = turns[t - 1] as RequestRecord
      assert.ok(
        (record.input_tokens ?? 0) - (previous.input_tokens ?? 0) >=
          Math.floor((tool.content ?? '').length / 4),
        'prompt tokens grow at least by the tool result',
      )
    }
    const figures = result.levels[0]?.turns
    assert.deepEqual(
      figures?.map((f) => [f.turn, f.requests, f.tool_call_turns]),
      [0, 1, 2].map((t) => [t, 1, 1]),
    )
    const table = sessionTables(result, 'text').join('\n')
    assert.match(table, /cached\s+tool calls/, 'the per-turn table gets its column')
  })
}

test("with the simulator's prefix cache, a turn after a call finds the previous prompt and the call cached: only the result is new", async () => {
  const { records, seen } = await runOn({ ...SIM, prefix_cache: true }, () => {})
  const turns = byTurn(records)
  for (const t of [1, 2]) {
    const record = turns[t] as RequestRecord
    const previous = turns[t - 1] as RequestRecord
    const result = (seen[t] as Message[]).at(-1) as Message
    assert.equal(result.role, 'tool')
    // Cached past the previous prompt (the call it generated is in the cache too), short of the result.
    assert.ok((record.cached_tokens ?? 0) > (previous.input_tokens ?? 0), JSON.stringify([record, previous]))
    assert.ok(
      (record.cached_tokens ?? 0) <=
        (record.input_tokens ?? 0) - Math.floor((result.content ?? '').length / 4) + 16,
      'the tool result itself was not cached',
    )
  }
})

test('a forced call the server answered in text goes back as text; a malformed call is classified, not a crash', async () => {
  const absent = await runOn({ ...SIM, quirks: { tool_calls: 'absent' } }, () => {})
  assert.deepEqual(
    byTurn(absent.records).map((r) => [r.error, r.tool_calls, r.tool_check]),
    [0, 1, 2].map(() => [null, 0, 'none']),
  )
  assert.deepEqual(
    absent.seen[1]?.slice(-2).map((m) => m.role),
    ['assistant', 'user'],
    'a text reply, then the next input as a user message',
  )
  assert.deepEqual(
    absent.result.levels[0]?.turns?.map((f) => f.tool_call_turns),
    [0, 0, 0],
  )

  const malformed = await runOn({ ...SIM, quirks: { tool_calls: 'malformed' } }, () => {})
  const turns = byTurn(malformed.records)
  assert.deepEqual(
    turns.map((r) => [r.error, r.tool_calls, r.tool_check]),
    [0, 1, 2].map(() => [null, 1, 'invalid']),
  )
  // No id from the server: the history names the call itself, and the result answers that name.
  const [assistant, tool] = (malformed.seen[1] ?? []).slice(-2) as [Message, Message]
  const id = assistant.tool_calls?.[0]?.id
  assert.match(id ?? '', /^call_\d+_0_0$/)
  assert.equal(tool.role, 'tool')
  assert.equal(tool.tool_call_id, id)
  assert.equal(assistant.tool_calls?.[0]?.function.name, '')
})

test('jobs with forced tool calls: each turn after a call sends the tools results on its branch', async () => {
  const { records, seen, result } = await runOn(SIM, (config) => {
    config.workload.sessions = false
    Object.assign(config.workload, { jobs: true, turns: 2, fan_out: 2, tool_wait_s: 0.01 })
    config.load.requests_per_level = 4
  })
  assert.ok(records.length >= 4)
  assert.ok(records.every((r) => r.error === null && r.tool_calls === 1))
  // Every request after a root follows a call with its result, answering it by id.
  const later = seen.filter((messages) => messages.some((m) => m.role === 'assistant'))
  assert.ok(later.length >= 3)
  for (const messages of later) {
    messages.forEach((m, i) => {
      if (m.role !== 'assistant') return
      const next = messages[i + 1]
      assert.equal(next?.role, 'tool', JSON.stringify(messages.map((x) => x.role)))
      assert.equal(next?.tool_call_id, m.tool_calls?.[0]?.id)
    })
    assert.equal(messages.at(-1)?.role, 'tool', 'the turn input is the tool result')
  }
  const depths = result.levels[0]?.jobs?.by_depth ?? []
  assert.ok(depths.length > 0)
  for (const d of depths) assert.equal(d.tool_call_turns, d.requests)
})
