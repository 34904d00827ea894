import type { ConnectionCounts } from '../client/connections.js'
import type { RequestPlan } from '../client/stream-client.js'
import type { Scheduler } from '../clock.js'
import type { RequestRecord } from '../records/types.js'
import { cancelAfterEvents } from './cancel-pick.js'
import { type JobBudget, type JobSource, jobLoop } from './job-loop.js'
import { type LevelShare, type OpenShare, type TimedWindow, warmupConcurrency } from './level-share.js'
import { type SendTurn, type SessionSource, sessionLoop } from './session-loop.js'

/** Which round of a level a thread runs: its warm-up requests first, then the measured round. */
export type Round =
  | { phase: 'warmup' }
  | {
      phase: 'measure'
      /**
       * When the measured round starts, on the run clock every thread shares (one timeOrigin per
       * process): offset 0 of the open-loop schedule, and the origin of a timed level's windows.
       */
      startAt: number
    }

export interface RoundOutcome {
  /** Open loop: arrivals planned, sent, and dropped (never sent: waited too long, or stopped). */
  arrivals: { planned: number; sent: number; dropped: number } | null
  /** What the thread's connections did in the round (set by the worker). */
  connections?: ConnectionCounts
}

/** Everything a round touches outside itself, so that tests can run one without sockets or real time. */
export interface RoundContext {
  worker: number
  nextSeq: () => number
  nextPromptId: () => number
  bodyFor: (promptId: number) => Buffer
  /** Sends one request on the thread's connection pool and resolves with its record. */
  send: (request: RequestPlan) => Promise<RequestRecord>
  /** Called as each request finishes. */
  onRecord: (record: RequestRecord) => void
  /** Polled before each new request: true once the user asked to stop (Ctrl-C). */
  stopRequested: () => boolean
  /** REAL_TIME in the program; a VirtualClock in tests. */
  clock: Scheduler<unknown>
  /** Multi-turn sessions (closed loop only): each stream runs whole sessions instead of single prompts. */
  sessions?: SessionSource
  /** Agentic jobs (closed loop only): each stream runs whole jobs, graphs of turns. */
  jobs?: JobSource
}

/**
 * Which requests of a round count, by when they were sent (closed loop) or meant to be sent (open
 * loop): before `from` is warm-up, at or after `until` cool-down, between them measured.
 */
interface Window {
  from: number
  until: number
}

/** The warm-up round: every request is warm-up. */
const WARMUP_ROUND: Window = { from: Number.POSITIVE_INFINITY, until: Number.POSITIVE_INFINITY }
/** A level measured by request count: every request of the measured round counts. */
const WHOLE_ROUND: Window = { from: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY }

/** Longest an idle open loop sleeps before looking at the stop flag again. */
const STOP_POLL_MS = 250

/** The context with its prompt ids cycled through [first, first + count); as it is without a range. */
function withinPrompts(
  context: RoundContext,
  range: { first: number; count: number } | undefined,
): RoundContext {
  if (range === undefined || range.count <= 0) return context
  return { ...context, nextPromptId: () => range.first + (context.nextPromptId() % range.count) }
}

export async function runRound(
  share: LevelShare,
  round: Round,
  context: RoundContext,
): Promise<RoundOutcome> {
  if (round.phase === 'warmup') {
    const load = { concurrency: warmupConcurrency(share), requests: share.warmup }
    const warmupContext = withinPrompts(context, share.warmupPrompts ?? share.prompts)
    await runClosedLoop(share, WARMUP_ROUND, load, Number.POSITIVE_INFINITY, warmupContext)
    return { arrivals: null }
  }
  const window = measuredWindow(share.window, round.startAt)
  if (share.load.kind === 'open') return runOpenLoop(share, window, share.load, round.startAt, context)
  const starts = share.load.startOffsets?.map((offset) => round.startAt + offset)
  const measured = withinPrompts(context, share.prompts)
  await runClosedLoop(share, window, share.load, roundEnd(share.window, round.startAt), measured, starts)
  return { arrivals: null }
}

function measuredWindow(timed: TimedWindow | null, startAt: number): Window {
  if (timed === null) return WHOLE_ROUND
  return {
    from: startAt + timed.warmup_s * 1000,
    until: startAt + (timed.warmup_s + timed.duration_s) * 1000,
  }
}

/** When a timed closed loop stops issuing: the end of its cool-down window. */
function roundEnd(timed: TimedWindow | null, startAt: number): number {
  if (timed === null) return Number.POSITIVE_INFINITY
  return startAt + (timed.warmup_s + timed.duration_s + timed.cooldown_s) * 1000
}

function phaseAt(window: Window, time: number): RequestRecord['phase'] {
  if (time < window.from) return 'warmup'
  if (time >= window.until) return 'cooldown'
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
async function runClosedLoop(
  share: LevelShare,
  window: Window,
  load: { concurrency: number; requests: number | null },
  deadline: number,
  context: RoundContext,
  /** When each stream sends its first request (staggered starts); absent = all at once. */
  starts?: Float64Array,
): Promise<void> {
  let left = load.requests ?? Number.POSITIVE_INFINITY
  const { clock } = context
  const claim = (): boolean => !context.stopRequested() && left-- > 0 && clock.now() < deadline
  // A session's later turns each use up a request but never stop it short of the budget, only of time.
  const spend = (): boolean => {
    left--
    return !context.stopRequested() && clock.now() < deadline
  }
  const going = (): boolean => !context.stopRequested() && clock.now() < deadline
  const jobBudget: JobBudget = {
    claim,
    reserve: (requests) => {
      left -= requests
    },
    going,
  }
  const { sessions, jobs } = context
  const sendTurn: SendTurn = (promptId, body, wantedAt, stamp) =>
    sendAttempts(share, window, context, promptId, wantedAt, body, stamp)
  const loops: Promise<void>[] = []
  const stream = (): Promise<void> =>
    jobs !== undefined
      ? jobLoop(jobs, clock, jobBudget, sendTurn)
      : sessions !== undefined
        ? sessionLoop(sessions, clock, claim, spend, sendTurn)
        : closedLoop(share, window, context, claim)
  for (let i = 0; i < load.concurrency; i++) {
    const startAt = starts?.[i]
    loops.push(startAt === undefined ? stream() : waitUntil(startAt, context).then(stream))
  }
  await Promise.all(loops)
}

/** Resolves at `at` on the context's clock, or sooner once a stop is asked for (polled). */
async function waitUntil(at: number, context: RoundContext): Promise<void> {
  const { clock } = context
  while (!context.stopRequested() && clock.now() < at) {
    const wait = Math.min(at - clock.now(), STOP_POLL_MS)
    await new Promise<void>((resolve) => clock.after(wait, resolve))
  }
}

async function closedLoop(
  share: LevelShare,
  window: Window,
  context: RoundContext,
  claim: () => boolean,
): Promise<void> {
  let wantedAt: number | null = null
  while (claim()) {
    const promptId = context.nextPromptId()
    const phase = phaseAt(window, context.clock.now())
    // Retries (off by default) are separate records: a failed attempt is counted, never hidden.
    for (let attempt = 1; attempt <= share.retry + 1; attempt++) {
      const record = await context.send(requestPlan(share, context, promptId, phase, wantedAt, attempt))
      context.onRecord(record)
      wantedAt = record.end_at
      if (record.error === null || context.stopRequested()) break
    }
  }
}

/** A session turn: sent with its retries like any request; resolves with the last attempt's record. */
async function sendAttempts(
  share: LevelShare,
  window: Window,
  context: RoundContext,
  promptId: number,
  wantedAt: number | null,
  body: Buffer,
  stamp: (record: RequestRecord) => void,
): Promise<RequestRecord> {
  const phase = phaseAt(window, context.clock.now())
  let record: RequestRecord | null = null
  for (let attempt = 1; attempt <= share.retry + 1; attempt++) {
    record = await context.send(requestPlan(share, context, promptId, phase, wantedAt, attempt, body))
    stamp(record)
    context.onRecord(record)
    wantedAt = record.end_at
    if (record.error === null || context.stopRequested()) break
  }
  return record as RequestRecord
}

function requestPlan(
  share: LevelShare,
  context: RoundContext,
  promptId: number,
  phase: RequestRecord['phase'],
  scheduledAt: number | null,
  attempt: number,
  body: Buffer = context.bodyFor(promptId),
): RequestPlan {
  const seq = context.nextSeq()
  const cancelAfter = cancelAfterEvents(share.cancel, context.worker, seq)
  return {
    seq,
    worker: context.worker,
    level: share.level,
    phase,
    prompt_id: promptId,
    scheduled_at: scheduledAt,
    attempt,
    body,
    ...(cancelAfter === null ? {} : { cancel_after_events: cancelAfter }),
  }
}

/**
 * The open loop: each arrival is sent at its intended time without waiting for earlier ones. A timer
 * wakes the loop for the next due arrival; every arrival already due is sent in the same turn. When
 * `maxInFlight` requests are out, arrivals queue in order and go as slots free up; scheduled_at stays
 * the intended time, so the queueing shows in latency-from-intended and in lateness.
 */
function runOpenLoop(
  share: LevelShare,
  window: Window,
  load: OpenShare,
  startAt: number,
  context: RoundContext,
): Promise<RoundOutcome> {
  const { offsets, maxInFlight, timeoutMs } = load
  const { clock } = context
  return new Promise((resolve) => {
    let next = 0 // next arrival not yet released
    let queuedFrom = 0 // arrivals [queuedFrom, next) are released but waiting for a slot
    let inFlight = 0
    let sent = 0
    let dropped = 0
    let timer: unknown = null

    const finishIfDone = (): void => {
      if (inFlight > 0 || queuedFrom < next || (next < offsets.length && !context.stopRequested())) return
      // Stopped early: arrivals never released count as dropped too (none was sent).
      dropped += offsets.length - next
      next = offsets.length
      if (timer !== null) clock.cancel(timer)
      resolve({ arrivals: { planned: offsets.length, sent, dropped } })
    }

    const send = async (index: number): Promise<void> => {
      const intended = startAt + (offsets[index] as number)
      const promptId = load.promptIds?.[index] ?? context.nextPromptId()
      const phase = phaseAt(window, intended)
      inFlight++
      sent++
      for (let attempt = 1; attempt <= share.retry + 1; attempt++) {
        const record = await context.send(requestPlan(share, context, promptId, phase, intended, attempt))
        context.onRecord(record)
        if (record.error === null || context.stopRequested()) break
      }
      inFlight--
      drainQueue()
      finishIfDone()
    }

    const drainQueue = (): void => {
      const now = clock.now()
      while (queuedFrom < next && inFlight < maxInFlight) {
        const index = queuedFrom++
        if (context.stopRequested() || now - (startAt + (offsets[index] as number)) > timeoutMs) dropped++
        else void send(index)
      }
    }

    const release = (): void => {
      timer = null
      const now = clock.now()
      if (context.stopRequested()) {
        finishIfDone()
        return
      }
      while (next < offsets.length && startAt + (offsets[next] as number) <= now) next++
      drainQueue()
      if (next < offsets.length) {
        // A real timer rounds to whole ms and may fire a little early; the loop above re-checks. At
        // low rates the wait is capped, so a Ctrl-C is noticed within STOP_POLL_MS, not one gap later.
        const due = startAt + (offsets[next] as number) - clock.now()
        timer = clock.after(Math.max(0, Math.min(due, STOP_POLL_MS)), release)
      }
      finishIfDone()
    }
    release()
  })
}
