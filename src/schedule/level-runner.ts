import { performance } from 'node:perf_hooks'
import type { ConnectionCounts } from '../client/connections.js'
import { type RequestPlan, sendRequest, type Target } from '../client/stream-client.js'
import type { RequestRecord } from '../records/types.js'

/** The measured window of a level, on the shared performance.now() clock; null ends = open. */
export interface MeasureWindow {
  /** Requests sent (closed loop) or intended (open loop) before this are warm-up. */
  from: number | null
  /** ... and at or after this, cool-down. */
  until: number | null
}

/** One round of a level on one event loop. */
export interface RoundPlan {
  level: number
  phase: 'warmup' | 'measure'
  retry: number
  /** Timed levels: records outside the window are tagged warmup/cooldown and excluded. */
  window: MeasureWindow
  load: ClosedLoad | OpenLoad
}

/** Exactly `concurrency` requests in flight. */
export interface ClosedLoad {
  kind: 'closed'
  concurrency: number
  /** Stop issuing after this many requests (first attempts), or ... */
  requests: number | null
  /** ... at this performance.now() time; in-flight requests then drain, each bounded by its timeout. */
  deadline: number | null
}

/** Requests sent at intended times, whatever the server's pace. */
export interface OpenLoad {
  kind: 'open'
  /** Intended send times, ms after `startAt`, ascending. */
  offsets: Float64Array
  /** performance.now() time of offset 0. */
  startAt: number
  /**
   * At most this many requests in flight; an arrival finding them all busy waits for one (and its
   * latency from the intended time includes the wait). A bound keeps a dead server from opening
   * thousands of sockets.
   */
  maxInFlight: number
  /** An arrival still waiting this long after its intended time is dropped, not sent. */
  dropAfterMs: number
}

export interface RoundOutcome {
  /** Open loop: arrivals planned, sent, and dropped (never sent: waited too long, or stopped). */
  arrivals: { planned: number; sent: number; dropped: number } | null
  /** What the thread's connections did in the round (set by the worker). */
  connections?: ConnectionCounts
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

/** Longest an idle open loop sleeps before looking at the stop flag again. */
const STOP_POLL_MS = 250

export async function runRound(plan: RoundPlan, context: RoundContext): Promise<RoundOutcome> {
  if (plan.load.kind === 'open') return runOpenLoop(plan, plan.load, context)
  await runClosedLoop(plan, plan.load, context)
  return { arrivals: null }
}

/** The phase a request belongs to, from when it was sent (closed) or meant to be sent (open). */
function phaseAt(plan: RoundPlan, time: number): RequestRecord['phase'] {
  if (plan.phase === 'warmup') return 'warmup'
  if (plan.window.from !== null && time < plan.window.from) return 'warmup'
  if (plan.window.until !== null && time >= plan.window.until) return 'cooldown'
  return 'measure'
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
async function runClosedLoop(plan: RoundPlan, load: ClosedLoad, context: RoundContext): Promise<void> {
  let left = load.requests ?? Number.POSITIVE_INFINITY
  const deadline = load.deadline ?? Number.POSITIVE_INFINITY
  const claim = (): boolean => !context.stopRequested() && left-- > 0 && performance.now() < deadline
  const loops: Promise<void>[] = []
  for (let i = 0; i < load.concurrency; i++) loops.push(closedLoop(plan, context, claim))
  await Promise.all(loops)
}

async function closedLoop(plan: RoundPlan, context: RoundContext, claim: () => boolean): Promise<void> {
  let wantedAt: number | null = null
  while (claim()) {
    const promptId = context.nextPromptId()
    const phase = phaseAt(plan, performance.now())
    // Retries (off by default) are separate records: a failed attempt is counted, never hidden.
    for (let attempt = 1; attempt <= plan.retry + 1; attempt++) {
      const record = await sendRequest(
        context.target,
        requestPlan(plan, context, promptId, phase, wantedAt, attempt),
      )
      context.onRecord(record)
      wantedAt = record.end_at
      if (record.error === null || context.stopRequested()) break
    }
  }
}

function requestPlan(
  plan: RoundPlan,
  context: RoundContext,
  promptId: number,
  phase: RequestRecord['phase'],
  scheduledAt: number | null,
  attempt: number,
): RequestPlan {
  return {
    seq: context.nextSeq(),
    worker: context.worker,
    level: plan.level,
    phase,
    prompt_id: promptId,
    scheduled_at: scheduledAt,
    attempt,
    body: context.bodyFor(promptId),
  }
}

/**
 * The open loop: each arrival is sent at its intended time without waiting for earlier ones. A timer
 * wakes the loop for the next due arrival; every arrival already due is sent in the same turn. When
 * `maxInFlight` requests are out, arrivals queue in order and go as slots free up; scheduled_at stays
 * the intended time, so the queueing shows in latency-from-intended and in lateness.
 */
function runOpenLoop(plan: RoundPlan, load: OpenLoad, context: RoundContext): Promise<RoundOutcome> {
  const { offsets, startAt, maxInFlight, dropAfterMs } = load
  return new Promise((resolve) => {
    let next = 0 // next arrival not yet released
    let queuedFrom = 0 // arrivals [queuedFrom, next) are released but waiting for a slot
    let inFlight = 0
    let sent = 0
    let dropped = 0
    let timer: NodeJS.Timeout | null = null

    const finishIfDone = (): void => {
      if (inFlight > 0 || queuedFrom < next || (next < offsets.length && !context.stopRequested())) return
      // Stopped early: arrivals never released count as dropped too (none was sent).
      dropped += offsets.length - next
      next = offsets.length
      if (timer !== null) clearTimeout(timer)
      resolve({ arrivals: { planned: offsets.length, sent, dropped } })
    }

    const send = async (index: number): Promise<void> => {
      const intended = startAt + (offsets[index] as number)
      const promptId = context.nextPromptId()
      const phase = phaseAt(plan, intended)
      inFlight++
      sent++
      for (let attempt = 1; attempt <= plan.retry + 1; attempt++) {
        const record = await sendRequest(
          context.target,
          requestPlan(plan, context, promptId, phase, intended, attempt),
        )
        context.onRecord(record)
        if (record.error === null || context.stopRequested()) break
      }
      inFlight--
      drainQueue()
      finishIfDone()
    }

    const drainQueue = (): void => {
      const now = performance.now()
      while (queuedFrom < next && inFlight < maxInFlight) {
        const index = queuedFrom++
        if (context.stopRequested() || now - (startAt + (offsets[index] as number)) > dropAfterMs) dropped++
        else void send(index)
      }
    }

    const release = (): void => {
      timer = null
      const now = performance.now()
      if (context.stopRequested()) {
        finishIfDone()
        return
      }
      while (next < offsets.length && startAt + (offsets[next] as number) <= now) next++
      drainQueue()
      if (next < offsets.length) {
        // setTimeout rounds to whole ms and may fire a little early; the loop above re-checks. At
        // low rates the wait is capped, so a Ctrl-C is noticed within STOP_POLL_MS, not one gap later.
        const due = startAt + (offsets[next] as number) - performance.now()
        timer = setTimeout(release, Math.max(0, Math.min(due, STOP_POLL_MS)))
      }
      finishIfDone()
    }
    release()
  })
}
