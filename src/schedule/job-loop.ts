import type { Scheduler } from '../clock.js'
import type { JobConversation } from '../workload/job-body.js'
import { turnDepths } from '../workload/jobs.js'
import { turnReply } from '../workload/tool-turn.js'
import type { SendTurn } from './session-loop.js'

/** Where a thread's jobs come from: each call, the next one (distinct across threads and shards). */
export interface JobSource {
  next(): { id: string; promptId: number; conversation: JobConversation }
}

/**
 * One stream of a closed loop in job mode: it runs one job's graph of turns, then the next job, so
 * the level's concurrency counts jobs in flight. A turn is sent once every parent has replied and
 * its tool wait has passed; turns ready together are sent together (a fan-out), so a job can have
 * several requests out. A new job starts only while the budget's `claim` allows, and then pays for
 * all its turns at once (`reserve`): a stream in a tool wait has not yet sent its later turns, and a
 * budget paid turn by turn let another stream start a job on them (16 requests of 4-turn jobs on 2
 * streams ran 5 jobs). So no job is cut by the count; the last may pass it by its turns less one.
 * Before each later turn `going` is asked (after any tool wait), so a Ctrl-C or the level's end
 * during a wait sends nothing more. A failed turn ends its branch: its
 * descendants would lack its reply. Tool waits are spent here, on the client, with no request out:
 * they are in a job's completion time but in no request's latency (each turn's scheduled_at is when
 * it became ready, after the wait).
 */
export interface JobBudget {
  /** May the stream start another job (its first request)? */
  claim(): boolean
  /** The job's later turns, paid for as it starts. */
  reserve(requests: number): void
  /** May a later turn still be sent (no stop asked, the level not over)? */
  going(): boolean
}

export async function jobLoop(
  jobs: JobSource,
  clock: Scheduler<unknown>,
  budget: JobBudget,
  sendTurn: SendTurn,
): Promise<void> {
  let wantedAt: number | null = null
  while (budget.claim()) {
    const job = jobs.next()
    budget.reserve(job.conversation.spec.turns.length - 1)
    wantedAt = await runJob(job, wantedAt, clock, budget.going, sendTurn)
  }
}

/** Runs one job's turns; resolves with the end of its last request, when the stream's next job is due. */
async function runJob(
  job: ReturnType<JobSource['next']>,
  startWanted: number | null,
  clock: Scheduler<unknown>,
  going: () => boolean,
  sendTurn: SendTurn,
): Promise<number | null> {
  const { id, promptId, conversation } = job
  const turns = conversation.spec.turns
  const depths = turnDepths(turns)
  const children = turns.map(() => [] as number[])
  turns.forEach((turn, t) => {
    for (const parent of turn.parents) children[parent]?.push(t)
  })
  /** Parents of each turn not yet done (replied and waited for). */
  const waiting = turns.map((turn) => turn.parents.length)
  /** When each turn became ready: its last parent's end plus that parent's tool wait. */
  const readyAt = turns.map(() => startWanted)
  let claimed = true // the job's first turn goes out with the stream's claim
  let stopped = false
  let lastEnd = startWanted

  const run = async (t: number): Promise<void> => {
    if (stopped) return
    if (claimed) claimed = false
    else if (!going()) {
      stopped = true
      return
    }
    const turn = turns[t]
    if (turn === undefined) return
    const record = await sendTurn(promptId, conversation.bodyFor(t), readyAt[t] ?? null, (r) => {
      r.job = id
      r.turn = t
      r.job_depth = depths[t] as number
      r.job_parents = turn.parents
      r.job_turns = turns.length
      r.tool_wait_ms = turn.tool_wait_ms
      r.requested_output_tokens = turn.output_tokens
    })
    lastEnd = Math.max(lastEnd ?? record.end_at, record.end_at)
    if (record.error !== null) return
    conversation.reply(t, turnReply(record, `call_${promptId}_${t}`))
    let doneAt = record.end_at
    if (turn.tool_wait_ms > 0 && (children[t] as number[]).length > 0) {
      await new Promise<void>((resolve) => clock.after(turn.tool_wait_ms, resolve))
      doneAt = clock.now()
    }
    const ready: number[] = []
    for (const child of children[t] as number[]) {
      readyAt[child] = Math.max(readyAt[child] ?? doneAt, doneAt)
      const left = (waiting[child] as number) - 1
      waiting[child] = left
      if (left === 0) ready.push(child)
    }
    await Promise.all(ready.map(run))
  }

  await Promise.all(turns.flatMap((turn, t) => (turn.parents.length === 0 ? [run(t)] : [])))
  return lastEnd
}
