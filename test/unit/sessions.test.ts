import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { RequestPlan } from '../../src/client/stream-client.js'
import { cacheEffect } from '../../src/metrics/cache-effect.js'
import { turnFigures } from '../../src/metrics/turn-figures.js'
import { VirtualClock } from '../../src/model/engine.js'
import type { RequestRecord } from '../../src/records/types.js'
import { runRound } from '../../src/schedule/level-runner.js'
import type { LevelShare } from '../../src/schedule/level-share.js'
import { BLOCK_TOKENS, PrefixCache } from '../../src/sim/prefix-cache.js'
import { DatasetError } from '../../src/workload/dataset.js'
import { SessionConversation } from '../../src/workload/session-body.js'
import { loadSessions, type SessionSpec } from '../../src/workload/sessions.js'
import { makeRecord } from '../helpers/records.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/sessions/', import.meta.url))
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length
const BODY = { model: 'm', endpoint: '/v1/chat/completions', stream: true }

test('ShareGPT with OpenAI roles: user turns in order, the system turn as preamble, reference replies as max_tokens', () => {
  const path = join(FIXTURES, 'sharegpt-openai-roles-multiturn.json')
  const raw = JSON.parse(readFileSync(path, 'utf8')) as {
    id: string
    conversations: { role: string; content: string }[]
  }[]
  const set = loadSessions(path, words, 99)
  assert.equal(set.sessions.length, raw.length)
  for (const [i, conversation] of raw.entries()) {
    const session = set.sessions[i] as SessionSpec
    const turns = conversation.conversations
    assert.equal(session.id, conversation.id)
    assert.deepEqual(
      session.turns,
      turns.filter((t) => t.role === 'user').map((t) => t.content),
    )
    assert.deepEqual(
      session.preamble.map((m) => m.content),
      turns.filter((t) => t.role === 'system').map((t) => t.content),
    )
    // Each user turn asks for as many tokens as the reply that followed it in the source.
    const replies = turns.flatMap((t, k) => (t.role === 'user' ? [turns[k + 1]?.content ?? ''] : []))
    assert.deepEqual(
      session.output_tokens,
      replies.map((reply) => (words(reply) > 0 ? words(reply) : 99)),
    )
  }
  assert.ok((set.sessions[0] as SessionSpec).turns.length > 1, 'the first conversation is multi-turn')
  assert.match(set.source, /2 sessions/)
})

test('AIPerf multi_turn JSONL: session ids and turn texts as written, max_tokens from the run', () => {
  const path = join(FIXTURES, 'aiperf-multi-turn.jsonl')
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { session_id: string; turns: { text: string }[] })
  const set = loadSessions(path, words, 77)
  assert.deepEqual(
    set.sessions.map((s) => [s.id, s.turns, s.output_tokens]),
    lines.map((l) => [l.session_id, l.turns.map((t) => t.text), l.turns.map(() => 77)]),
  )
})

test('classic ShareGPT (from: human/gpt) in a JSON array and a conversation per JSONL line read alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-sessions-'))
  try {
    const conversation = {
      id: 'c1',
      conversations: [
        { from: 'system', value: 'be brief' },
        { from: 'human', value: 'first question' },
        { from: 'gpt', value: 'one two three' },
        { from: 'human', value: 'second question' },
      ],
    }
    writeFileSync(join(dir, 'a.json'), JSON.stringify([conversation]))
    writeFileSync(join(dir, 'b.jsonl'), `${JSON.stringify(conversation)}\n`)
    for (const file of ['a.json', 'b.jsonl']) {
      const [session] = loadSessions(join(dir, file), words, 50).sessions
      assert.deepEqual(session, {
        id: 'c1',
        preamble: [{ role: 'system', content: 'be brief' }],
        turns: ['first question', 'second question'],
        output_tokens: [3, 50],
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a session dataset of the wrong shape: the error names the file and the entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-sessions-'))
  const failure = (path: string): string => {
    try {
      loadSessions(path, words, 10)
    } catch (error) {
      assert.ok(error instanceof DatasetError, String(error))
      return error.message
    }
    assert.fail(`${path} was accepted`)
  }
  try {
    const jsonl = join(dir, 'bad.jsonl')
    writeFileSync(
      jsonl,
      '{"session_id":"a","turns":[{"text":"hi"}]}\n{"session_id":"b","turns":[{"text":"hi"},{"txt":"oops"}]}\n',
    )
    assert.match(failure(jsonl), new RegExp(`^dataset ${jsonl}:2: turns\\[1\\]: expected \\{"text"`))
    const array = join(dir, 'bad.json')
    writeFileSync(
      array,
      JSON.stringify([
        { conversations: [{ from: 'human', value: 'x' }] },
        { conversations: [{ from: 'robot', value: 'x' }] },
      ]),
    )
    assert.match(
      failure(array),
      new RegExp(`^dataset ${array}: conversation 2: conversations\\[0\\]: expected`),
    )
    const noUser = join(dir, 'no-user.json')
    writeFileSync(noUser, JSON.stringify([{ messages: [{ role: 'assistant', content: 'hello' }] }]))
    assert.match(failure(noUser), /conversation 1: no user turn in "messages"/)
    // vLLM's generator settings are one pretty-printed JSON object, not conversations.
    const vllm = join(FIXTURES, 'vllm-multi-turn-generate.json')
    assert.match(failure(vllm), new RegExp(`^dataset ${vllm}`))
    assert.match(failure(vllm), /vLLM's multi-turn generator/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a session's bodies: each turn carries the preamble, every earlier user turn and the reply it got", () => {
  const spec: SessionSpec = {
    id: 's',
    preamble: [{ role: 'system', content: 'sys' }],
    turns: ['u0', 'u1', 'u2'],
    output_tokens: [5, 6, 7],
  }
  const conversation = new SessionConversation(spec, BODY)
  const bodies: { messages: { role: string; content: string }[]; max_tokens: number }[] = []
  for (let t = 0; t < spec.turns.length; t++) {
    bodies.push(JSON.parse(conversation.nextBody().toString()))
    conversation.reply({ text: `reply ${t}`, calls: [] })
  }
  assert.deepEqual(
    bodies.map((b) => b.messages.map((m) => `${m.role}:${m.content}`)),
    [
      ['system:sys', 'user:u0'],
      ['system:sys', 'user:u0', 'assistant:reply 0', 'user:u1'],
      ['system:sys', 'user:u0', 'assistant:reply 0', 'user:u1', 'assistant:reply 1', 'user:u2'],
    ],
  )
  assert.deepEqual(
    bodies.map((b) => b.max_tokens),
    [5, 6, 7],
  )
})

/** A closed round in session mode on a virtual clock; each request takes 10 ms and replies with its body's size. */
async function sessionRound(options: {
  concurrency: number
  requests: number
  turns: number
  thinkMs?: number
  failTurn?: number
  /** Virtual time from which the user has asked to stop. */
  stopAt?: number
}): Promise<{ sent: { at: number; plan: RequestPlan }[]; records: RequestRecord[] }> {
  const clock = new VirtualClock()
  const sent: { at: number; plan: RequestPlan }[] = []
  const records: RequestRecord[] = []
  let seq = 0
  let sessionNo = 0
  const spec: SessionSpec = {
    id: 'x',
    preamble: [],
    turns: Array.from({ length: options.turns }, (_, t) => `turn ${t}`),
    output_tokens: Array.from({ length: options.turns }, () => 4),
  }
  const share: LevelShare = {
    level: options.concurrency,
    warmup: 0,
    retry: 0,
    window: null,
    load: { kind: 'closed', concurrency: options.concurrency, requests: options.requests },
  }
  const round = runRound(
    share,
    { phase: 'measure', startAt: 0 },
    {
      worker: 0,
      nextSeq: () => seq++,
      nextPromptId: () => 0,
      bodyFor: () => assert.fail('session turns build their own bodies'),
      send: (plan) => {
        const at = clock.now()
        sent.push({ at, plan })
        const turn = (JSON.parse(plan.body.toString()).messages.length - 1) / 2
        return new Promise((resolve) =>
          clock.after(10, () =>
            resolve(
              makeRecord({
                seq: plan.seq,
                sent_at: at,
                scheduled_at: plan.scheduled_at ?? at,
                end_at: clock.now(),
                output_text: `answer ${plan.seq}`,
                error: turn === options.failTurn ? { class: 'http_5xx', message: 'fake' } : null,
              }),
            ),
          ),
        )
      },
      onRecord: (record) => records.push(record),
      stopRequested: () => clock.now() >= (options.stopAt ?? Number.POSITIVE_INFINITY),
      clock,
      sessions: {
        thinkMs: options.thinkMs ?? 0,
        next: () => {
          const n = sessionNo++
          return { id: `x#${n}`, promptId: n, conversation: new SessionConversation(spec, BODY) }
        },
      },
    },
  )
  let done = false
  void round.then(() => {
    done = true
  })
  for (let step = 0; !done; step++) {
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (step > 10_000) assert.fail('the session round did not end')
    clock.advanceBy(1)
  }
  return { sent, records }
}

test('session loop: a stream runs whole sessions in order, and a level of N requests ends on whole sessions', async () => {
  const { sent, records } = await sessionRound({ concurrency: 2, requests: 7, turns: 3 })
  // Two streams run two sessions (6 requests); the budget has 1 left, so one more session starts and
  // runs its 3 turns: 9 requests, every session whole.
  assert.equal(records.length, 9)
  const bySession = new Map<string, number[]>()
  for (const record of records)
    bySession.set(record.session as string, [
      ...(bySession.get(record.session as string) ?? []),
      record.turn as number,
    ])
  assert.deepEqual(
    [...bySession.values()],
    [
      [0, 1, 2],
      [0, 1, 2],
      [0, 1, 2],
    ],
  )
  // Turn k of a session carries the reply its turn k-1 got (the fake server's "answer <seq>").
  for (const { plan } of sent) {
    const messages = JSON.parse(plan.body.toString()).messages as { role: string; content: string }[]
    const replies = messages.filter((m) => m.role === 'assistant').map((m) => m.content)
    for (const reply of replies) assert.match(reply, /^answer \d+$/)
  }
  assert.ok(records.every((r) => r.requested_output_tokens === 4))
})

test('session loop: think time delays the next turn; a failed turn ends its session', async () => {
  const thinking = await sessionRound({ concurrency: 1, requests: 2, turns: 2, thinkMs: 50 })
  assert.deepEqual(
    thinking.sent.map((s) => s.at),
    [0, 60],
  )
  // The turn was due when the think time ended: no lateness is charged for the pause.
  assert.equal((thinking.records[1] as RequestRecord).scheduled_at, 60)
  // A stop asked during the pause: the next turn is never sent.
  const stopped = await sessionRound({ concurrency: 1, requests: 3, turns: 3, thinkMs: 50, stopAt: 30 })
  assert.deepEqual(
    stopped.sent.map((s) => s.at),
    [0],
  )
  const failing = await sessionRound({ concurrency: 1, requests: 4, turns: 3, failTurn: 1 })
  assert.deepEqual(
    failing.records.map((r) => `${r.session}/${r.turn}`),
    ['x#0/0', 'x#0/1', 'x#1/0', 'x#1/1'],
  )
})

test('per-turn figures: TTFT, prompt and cached tokens per turn index; absent without sessions', () => {
  const record = (turn: number, ttft: number, input: number, cached: number): RequestRecord =>
    makeRecord({
      turn,
      session: `s${turn}`,
      sent_at: 0,
      token_times: [ttft, ttft + 5],
      input_tokens: input,
      cached_tokens: cached,
    })
  const records = [
    record(0, 100, 500, 0),
    record(0, 120, 500, 0),
    record(1, 40, 900, 480),
    record(1, 60, 1100, 520),
  ]
  const failed = makeRecord({ turn: 1, error: { class: 'http_5xx', message: 'x' }, cached_tokens: 0 })
  assert.deepEqual(turnFigures([...records, failed]), [
    {
      turn: 0,
      requests: 2,
      ttft_p50_ms: 110,
      ttft_p95_ms: 119,
      input_tokens_mean: 500,
      cached_tokens_mean: 0,
      cached_share: 0,
    },
    {
      turn: 1,
      requests: 2,
      ttft_p50_ms: 50,
      ttft_p95_ms: 59,
      input_tokens_mean: 1000,
      cached_tokens_mean: 500,
      cached_share: 0.5,
    },
  ])
  assert.equal(turnFigures([makeRecord({})]), null)
})

test('cache effect: TTFT p50 by cached share in quarters; absent when nothing was cached', () => {
  const record = (ttft: number, input: number, cached: number): RequestRecord =>
    makeRecord({ sent_at: 0, token_times: [ttft], input_tokens: input, cached_tokens: cached })
  const buckets = cacheEffect([
    record(100, 400, 0),
    record(90, 400, 40),
    record(30, 400, 390),
    record(20, 400, 400),
  ])
  assert.deepEqual(buckets, [
    { from: 0, to: 0.25, requests: 2, ttft_p50_ms: 95, uncached_tokens_mean: 380 },
    { from: 0.25, to: 0.5, requests: 0, ttft_p50_ms: null, uncached_tokens_mean: 0 },
    { from: 0.5, to: 0.75, requests: 0, ttft_p50_ms: null, uncached_tokens_mean: 0 },
    { from: 0.75, to: 1, requests: 2, ttft_p50_ms: 25, uncached_tokens_mean: 5 },
  ])
  assert.equal(cacheEffect([record(100, 400, 0)]), null)
})

test('simulator prefix cache: a repeated prefix is cached by whole blocks, the reply too, and the oldest blocks go first', () => {
  const cache = new PrefixCache(1_000_000)
  const system = { role: 'system', content: 'x'.repeat(4 * BLOCK_TOKENS * 10) }
  const first = [system, { role: 'user', content: 'a'.repeat(400) }]
  const tokens = (messages: { content: string }[]): number =>
    Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4)
  assert.equal(cache.serve(first, tokens(first), 'the reply'), 0)
  // The same prompt again: its whole blocks (the partial last block is computed again).
  const again = cache.serve(first, tokens(first))
  assert.ok(again > tokens(first) - BLOCK_TOKENS - 1 && again < tokens(first), `again ${again}`)
  // The next turn carries the reply: its prefix through the reply's full blocks is cached.
  const next = [
    ...first,
    { role: 'assistant', content: 'the reply' },
    { role: 'user', content: 'b'.repeat(400) },
  ]
  const cached = cache.serve(next, tokens(next))
  assert.ok(cached >= tokens(first) - BLOCK_TOKENS, `cached ${cached} of ${tokens(next)}`)
  assert.ok(cached < tokens(next) - 100)
  // Another conversation sharing only the system prompt: its blocks, no more.
  const other = [system, { role: 'user', content: 'c'.repeat(400) }]
  const shared = cache.serve(other, tokens(other))
  assert.ok(shared >= 9 * BLOCK_TOKENS && shared <= 11 * BLOCK_TOKENS, `shared ${shared}`)
  // A cache of 4 blocks cannot keep a 10-block prefix: nothing comes back.
  const small = new PrefixCache(4 * BLOCK_TOKENS)
  small.serve(first, tokens(first))
  assert.equal(small.serve(first, tokens(first)), 0)
})

test('conversations nested deeper than 128 levels are refused with their line, in a JSON array or a JSONL line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-sessions-'))
  const nested = `${'['.repeat(129)}${']'.repeat(129)}`
  const array = join(dir, 'deep.json')
  writeFileSync(array, `[\n${nested}]`)
  assert.throws(() => loadSessions(array, words, 99), {
    message: `dataset ${array}:2: nested deeper than 128 levels of { or [ (real files nest a few levels)`,
  })
  const jsonl = join(dir, 'deep.jsonl')
  writeFileSync(jsonl, `{"turns": [{"text": "hi"}]}\n\n{"turns": ${nested}}\n`)
  assert.throws(() => loadSessions(jsonl, words, 99), {
    message: `dataset ${jsonl}:3: nested deeper than 128 levels of { or [ (real files nest a few levels)`,
  })
  rmSync(dir, { recursive: true, force: true })
})
