import { performance } from 'node:perf_hooks'
import { type RequestPlan, sendRequest, type Target } from '../client/stream-client.js'
import type { RequestRecord } from '../records/types.js'

/** One round of a level on one event loop: exactly `concurrency` requests in flight. */
export interface RoundPlan {
  level: number
  phase: 'warmup' | 'measure'
  concurrency: number
  /** Stop issuing after this many requests (first attempts), or ... */
  requests: number | null
  /** ... at this performance.now() time; in-flight requests then drain, each bounded by its timeout. */
  deadline: number | null
  retry: number
}

export interface RoundContext {
  target: Target
  worker: number
  nextSeq: () => number
  nextPromptId: () => number
  bodyFor: (promptId: number) => Buffer
  /** Called as each request finishes. */
  onRecord: (record: RequestRecord) => void
  /** Polled before each new request: true once the user asked to stop (Ctrl-C). */
  stopRequested: () => boolean
}

/**
 * The closed loop: `concurrency` loops each send a request, await its record and send the next,
 * until the request count or the deadline is used up. Resolves when every in-flight request has
 * finished; a request can never outlive its own timeout, so the drain is bounded by it.
 *
 * Each record's scheduled_at is when its loop wanted to send: the end of the loop's previous
 * request, so sent_at - scheduled_at is the client's own dispatch lateness in steady state. A
 * loop's first request has no earlier one: its scheduled_at is its own send time (connecting is
 * the start-up burst of a level, a one-off that warm-up absorbs, not the steady lateness).
 */
export async function runRound(plan: RoundPlan, context: RoundContext): Promise<void> {
  let left = plan.requests ?? Number.POSITIVE_INFINITY
  const deadline = plan.deadline ?? Number.POSITIVE_INFINITY
  const claim = (): boolean => !context.stopRequested() && left-- > 0 && performance.now() < deadline
  const loops: Promise<void>[] = []
  for (let i = 0; i < plan.concurrency; i++) loops.push(closedLoop(plan, context, claim))
  await Promise.all(loops)
}

async function closedLoop(plan: RoundPlan, context: RoundContext, claim: () => boolean): Promise<void> {
  let wantedAt: number | null = null
  while (claim()) {
    const promptId = context.nextPromptId()
    const body = context.bodyFor(promptId)
    // Retries (off by default) are separate records: a failed attempt is counted, never hidden.
    for (let attempt = 1; attempt <= plan.retry + 1; attempt++) {
      const request: RequestPlan = {
        seq: context.nextSeq(),
        worker: context.worker,
        level: plan.level,
        phase: plan.phase,
        prompt_id: promptId,
        scheduled_at: wantedAt,
        attempt,
        body,
      }
      const record = await sendRequest(context.target, request)
      context.onRecord(record)
      wantedAt = record.end_at
      if (record.error === null || context.stopRequested()) break
    }
  }
}
