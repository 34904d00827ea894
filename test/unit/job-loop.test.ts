import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RequestPlan } from '../../src/client/stream-client.js'
import { VirtualClock } from '../../src/model/engine.js'
import type { RequestRecord } from '../../src/records/types.js'
import { runRound } from '../../src/schedule/level-runner.js'
import type { LevelShare } from '../../src/schedule/level-share.js'
import { JobConversation } from '../../src/workload/job-body.js'
import type { JobSpec } from '../../src/workload/jobs.js'
import { makeRecord } from '../helpers/records.js'

const BODY = { model: 'm', endpoint: '/v1/chat/completions', stream: true }

/**
 * A plan, two sub-agents fanned out from it, and their join. Each request takes as many virtual ms
 * as the max_tokens it asks for, so the timeline below is exact.
 */
const FAN_OUT_JOIN: JobSpec = {
  id: 'fj',
  preamble: [{ role: 'system', content: 'agent' }],
  turns: [
    { input: 'plan', output_tokens: 10, tool_wait_ms: 100, parents: [] },
    { input: 'left', output_tokens: 20, tool_wait_ms: 50, parents: [0] },
    { input: 'right', output_tokens: 40, tool_wait_ms: 50, parents: [0] },
    { input: 'join', output_tokens: 10, tool_wait_ms: 0, parents: [1, 2] },
  ],
}

interface Sent {
  at: number
  plan: RequestPlan
  messages: { role: string; content: string }[]
}

async function jobRound(options: {
  spec: JobSpec
  concurrency: number
  requests: number
  /** The turn (by its user message) whose request fails. */
  failInput?: string
  stopAt?: number
}): Promise<{ sent: Sent[]; records: RequestRecord[] }> {
  const clock = new VirtualClock()
  const sent: Sent[] = []
  const records: RequestRecord[] = []
  let seq = 0
  let jobNo = 0
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
      bodyFor: () => assert.fail('job turns build their own bodies'),
      send: (plan) => {
        const at = clock.now()
        const body = JSON.parse(plan.body.toString()) as { messages: Sent['messages']; max_tokens: number }
        sent.push({ at, plan, messages: body.messages })
        const input = body.messages.at(-1)?.content
        return new Promise((resolve) =>
          clock.after(body.max_tokens, () =>
            resolve(
              makeRecord({
                seq: plan.seq,
                sent_at: at,
                scheduled_at: plan.scheduled_at ?? at,
                end_at: clock.now(),
                output_text: `answer to ${input}`,
                error: input === options.failInput ? { class: 'http_5xx', message: 'fake' } : null,
              }),
            ),
          ),
        )
      },
      onRecord: (record) => records.push(record),
      stopRequested: () => clock.now() >= (options.stopAt ?? Number.POSITIVE_INFINITY),
      clock,
      jobs: {
        next: () => {
          const n = jobNo++
          return { id: `fj#${n}`, promptId: n, conversation: new JobConversation(options.spec, BODY) }
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
    if (step > 100_000) assert.fail('the job round did not end')
    clock.advanceBy(1)
  }
  return { sent, records }
}

test('a job runs its fan-out in parallel after the tool wait, and its join after both branches and their waits', async () => {
  const { sent, records } = await jobRound({ spec: FAN_OUT_JOIN, concurrency: 1, requests: 4 })
  // plan 0–10, tool 10–110; left 110–130 and right 110–150 at once; their tools end at 180 and 200;
  // the join waits for both: 200–210.
  assert.deepEqual(
    sent.map((s) => [s.messages.at(-1)?.content, s.at, s.plan.scheduled_at]),
    [
      ['plan', 0, null],
      ['left', 110, 110],
      ['right', 110, 110],
      ['join', 200, 200],
    ],
  )
  // Each branch carries the trunk and its own turn; the join carries both branches' real replies.
  assert.deepEqual(
    sent[1]?.messages.map((m) => m.content),
    ['agent', 'plan', 'answer to plan', 'left'],
  )
  assert.deepEqual(
    sent[3]?.messages.map((m) => m.content),
    ['agent', 'plan', 'answer to plan', 'left', 'answer to left', 'right', 'answer to right', 'join'],
  )
  assert.deepEqual(
    records.map((r) => [r.job, r.turn, r.job_depth, r.job_parents, r.job_turns, r.tool_wait_ms]),
    [
      ['fj#0', 0, 0, [], 4, 100],
      ['fj#0', 1, 1, [0], 4, 50],
      ['fj#0', 2, 1, [0], 4, 50],
      ['fj#0', 3, 2, [1, 2], 4, 0],
    ],
  )
})

test('concurrency counts jobs: two streams run two jobs side by side, a level ends on whole jobs', async () => {
  const { records } = await jobRound({ spec: FAN_OUT_JOIN, concurrency: 2, requests: 9 })
  // Two jobs (8 requests); one request of the budget is left, so one more job starts and runs whole.
  const byJob = new Map<string, number>()
  for (const r of records) byJob.set(r.job as string, (byJob.get(r.job as string) ?? 0) + 1)
  assert.deepEqual([...byJob.values()], [4, 4, 4])
  assert.equal(records.length, 12)
  // Both first jobs started at 0: the streams ran them side by side.
  assert.deepEqual(
    records.filter((r) => r.turn === 0).map((r) => r.sent_at),
    [0, 0, 210],
  )
})

test('a failed turn ends its branch: the join that needs its reply is never sent, the other branch is', async () => {
  const { sent } = await jobRound({ spec: FAN_OUT_JOIN, concurrency: 1, requests: 3, failInput: 'left' })
  assert.deepEqual(
    sent.map((s) => s.messages.at(-1)?.content),
    ['plan', 'left', 'right'],
  )
})

test('a stop during a tool wait sends nothing more', async () => {
  const { sent } = await jobRound({ spec: FAN_OUT_JOIN, concurrency: 1, requests: 40, stopAt: 50 })
  assert.deepEqual(
    sent.map((s) => s.messages.at(-1)?.content),
    ['plan'],
  )
})
