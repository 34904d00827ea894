import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ToolTurnCount } from '../../src/metrics/tool-turn-count.js'
import { JobConversation } from '../../src/workload/job-body.js'
import { SessionConversation } from '../../src/workload/session-body.js'
import { type TurnReply, turnReply } from '../../src/workload/tool-turn.js'
import { makeRecord } from '../helpers/records.js'

const TOOLS = {
  schema: null,
  tools: [{ name: 'f', parameters: { type: 'object' } }],
  toolChoice: 'required',
}
const BODY = { model: 'm', endpoint: '/v1/chat/completions', stream: true, structured: TOOLS }

interface Sent {
  role: string
  content: string
  tool_calls?: { id: string; function: { name: string; arguments: string } }[]
  tool_call_id?: string
}

function messagesOf(body: Buffer): Sent[] {
  return (JSON.parse(body.toString()) as { messages: Sent[] }).messages
}

/** Messages as `role:content`, a call as `[id name args]`, a result as `tool(id):content`. */
function written(messages: readonly Sent[]): string[] {
  return messages.map((m) =>
    m.role === 'tool'
      ? `tool(${m.tool_call_id}):${m.content}`
      : `${m.role}:${m.content}${(m.tool_calls ?? []).map((c) => ` [${c.id} ${c.function.name} ${c.function.arguments}]`).join('')}`,
  )
}

const call = (id: string): TurnReply => ({
  text: '',
  calls: [{ id, type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
})

test("a session's turn after a tool call sends the call and one result per call (the turn's input), no user message", () => {
  const spec = { id: 's', preamble: [], turns: ['u0', 'u1', 'u2'], output_tokens: [5, 5, 5] }
  const conversation = new SessionConversation(spec, BODY)
  const bodies: Buffer[] = []
  const replies: TurnReply[] = [
    {
      text: 'checking',
      calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        { id: 'b', type: 'function', function: { name: 'f', arguments: '{"a":2}' } },
      ],
    },
    { text: 'done', calls: [] },
    { text: 'x', calls: [] },
  ]
  for (const reply of replies) {
    bodies.push(conversation.nextBody())
    conversation.reply(reply)
  }
  assert.deepEqual(written(messagesOf(bodies[2] as Buffer)), [
    'user:u0',
    'assistant:checking [a f {"a":1}] [b f {"a":2}]',
    'tool(a):u1',
    'tool(b):u1',
    'assistant:done',
    'user:u2',
  ])
  // Every body offers the tools.
  assert.ok(bodies.every((b) => Array.isArray((JSON.parse(b.toString()) as { tools: unknown }).tools)))
})

test("a job's branches each answer their parent's calls with their own input; at a join, the turn before it is answered", () => {
  const turn = (input: string, parents: number[]) => ({ input, output_tokens: 4, tool_wait_ms: 0, parents })
  const spec = {
    id: 'j',
    preamble: [{ role: 'system' as const, content: 'sys' }],
    // 0 plans; 1 and 2 run in parallel after it; 3 joins them.
    turns: [turn('plan', []), turn('left', [0]), turn('right', [0]), turn('join', [1, 2])],
  }
  const job = new JobConversation(spec, BODY)
  job.reply(0, call('c0'))
  assert.deepEqual(written(messagesOf(job.bodyFor(1))), [
    'system:sys',
    'user:plan',
    'assistant: [c0 f {"a":1}]',
    'tool(c0):left',
  ])
  assert.deepEqual(written(messagesOf(job.bodyFor(2))), [
    'system:sys',
    'user:plan',
    'assistant: [c0 f {"a":1}]',
    'tool(c0):right',
  ])
  job.reply(1, call('c1'))
  job.reply(2, { text: 'r2', calls: [] })
  assert.deepEqual(written(messagesOf(job.bodyFor(3))), [
    'system:sys',
    'user:plan',
    'assistant: [c0 f {"a":1}]',
    'tool(c0):left',
    'assistant: [c1 f {"a":1}]',
    'tool(c1):right',
    'assistant:r2',
    'user:join',
  ])
})

test('a reply is read from the record: calls as streamed (ids made up where the server sent none), text without reasoning or calls', () => {
  const record = makeRecord({
    output_text: 'thinking…sure get{"x":1}',
    reasoning_text: 'thinking…',
    tool_call_parts: [
      { id: 'srv', name: 'get', arguments: '{"x":1}' },
      { name: '', arguments: '{"' },
    ],
    tool_call_content: 'thinking…sure ',
  })
  assert.deepEqual(turnReply(record, 'call_7_1'), {
    text: 'sure ',
    calls: [
      { id: 'srv', type: 'function', function: { name: 'get', arguments: '{"x":1}' } },
      { id: 'call_7_1_1', type: 'function', function: { name: '', arguments: '{"' } },
    ],
  })
  assert.deepEqual(
    turnReply(makeRecord({ output_text: 'thinking…hello', reasoning_text: 'thinking…' }), 'c'),
    {
      text: 'hello',
      calls: [],
    },
  )
})

test('tool-call turns count the calls that came as deltas, and are absent without tools', () => {
  const count = new ToolTurnCount()
  assert.deepEqual(count.figure(), {})
  count.add(makeRecord({}))
  assert.deepEqual(count.figure(), {}, 'a record the tool check never saw')
  count.add(makeRecord({ tool_calls: 1, tool_call_source: 'deltas' }))
  count.add(makeRecord({ tool_calls: 1, tool_call_source: 'text' }))
  count.add(makeRecord({ tool_calls: 0 }))
  assert.deepEqual(count.figure(), { tool_call_turns: 1 })
})
