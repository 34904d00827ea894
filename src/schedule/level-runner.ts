import { performance } from 'node:perf_hooks'
import { type RequestPlan, sendRequest, type Target } from '../client/stream-client.js'
import type { RequestRecord } from '../records/types.js'

/** One level of the closed-loop gradient: exactly `concurrency` requests in flight. */
export interface LevelPlan {
  concurrency: number
  /** Stop issuing after this many measured requests (first attempts), or ... */
  requests: number | null
  /** ... after this many seconds; in-flight requests then drain, each bounded by its timeout. */
  duration_s: number | null
  warmup: number
  retry: number
}

/** Shared across levels so every request of a run gets its own sequence number and prompt. */
export interface RunCounters {
  seq: number
  prompt: number
}

export interface LevelContext {
  target: Target
  counters: RunCounters
  bodyFor: (promptId: number) => Buffer
  /** Called as each request finishes (records are written to disk here). */
  onRecord: (record: RequestRecord) => void
  /** Polled before each new request: true once the user asked to stop (Ctrl-C). */
  stopRequested: () => boolean
}

/**
 * Runs warm-up requests (sent, recorded as `warmup`, excluded from figures), then the measured
 * closed loop: `concurrency` loops each send a request, await its record, and send the next,
 * until the request count or the duration is used up. Resolves when every in-flight request has
 * finished; a request can never outlive its own timeout, so the drain is bounded by it.
 */
export async function runLevel(plan: LevelPlan, context: LevelContext): Promise<RequestRecord[]> {
  const records: RequestRecord[] = []
  const keep = (record: RequestRecord): void => {
    records.push(record)
    context.onRecord(record)
  }
  if (plan.warmup > 0) {
    let warmupLeft = plan.warmup
    const claimWarmup = (): boolean => warmupLeft-- > 0 && !context.stopRequested()
    await runLoops(Math.min(plan.concurrency, plan.warmup), 'warmup', plan, context, claimWarmup, keep)
  }
  let measuredLeft = plan.requests ?? Number.POSITIVE_INFINITY
  const deadline =
    plan.duration_s === null ? Number.POSITIVE_INFINITY : performance.now() + plan.duration_s * 1000
  const claimMeasured = (): boolean =>
    !context.stopRequested() && measuredLeft-- > 0 && performance.now() < deadline
  await runLoops(plan.concurrency, 'measure', plan, context, claimMeasured, keep)
  return records
}

function runLoops(
  loops: number,
  phase: RequestRecord['phase'],
  plan: LevelPlan,
  context: LevelContext,
  claim: () => boolean,
  keep: (record: RequestRecord) => void,
): Promise<unknown> {
  const running: Promise<void>[] = []
  for (let i = 0; i < loops; i++) running.push(closedLoop(phase, plan, context, claim, keep))
  return Promise.all(running)
}

async function closedLoop(
  phase: RequestRecord['phase'],
  plan: LevelPlan,
  context: LevelContext,
  claim: () => boolean,
  keep: (record: RequestRecord) => void,
): Promise<void> {
  while (claim()) {
    const promptId = context.counters.prompt++
    const body = context.bodyFor(promptId)
    // Retries (off by default) are separate records: a failed attempt is counted, never hidden.
    for (let attempt = 1; attempt <= plan.retry + 1; attempt++) {
      const request: RequestPlan = {
        seq: context.counters.seq++,
        worker: 0,
        level: plan.concurrency,
        phase,
        prompt_id: promptId,
        scheduled_at: performance.now(),
        attempt,
        body,
      }
      const record = await sendRequest(context.target, request)
      keep(record)
      if (record.error === null || context.stopRequested()) break
    }
  }
}
