import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RequestPlan } from '../../src/client/stream-client.js'
import { VirtualClock } from '../../src/model/engine.js'
import type { RequestRecord } from '../../src/records/types.js'
import { type Round, type RoundOutcome, runRound } from '../../src/schedule/level-runner.js'
import type { LevelShare, TimedWindow } from '../../src/schedule/level-share.js'
import { makeRecord } from '../helpers/records.js'

/**
 * The level runner on a VirtualClock with a fake send: a request takes `durationMs` of virtual time
 * and its record is stamped on that clock, so queueing, dropping, stopping, windows and lateness are
 * checked to the millisecond, without sockets and without waiting.
 */
interface Sent {
  at: number
  plan: RequestPlan
}

interface Bench {
  clock: VirtualClock
  sent: Sent[]
  records: RequestRecord[]
  /** Most requests in flight at once. */
  peak: () => number
  run: (share: LevelShare, round: Round) => Promise<RoundOutcome>
}

function bench(options: {
  durationMs: number
  /** Asked before each new request, as the worker asks its Ctrl-C flag. */
  stop?: (bench: Bench) => boolean
  /** Whether the request fails (its record carries an error). */
  fails?: (plan: RequestPlan) => boolean
}): Bench {
  const clock = new VirtualClock()
  let inFlight = 0
  let peak = 0
  let seq = 0
  let promptId = 0
  const send = (plan: RequestPlan): Promise<RequestRecord> => {
    const sentAt = clock.now()
    self.sent.push({ at: sentAt, plan })
    peak = Math.max(peak, ++inFlight)
    return new Promise((resolve) =>
      clock.after(options.durationMs, () => {
        inFlight--
        resolve(
          makeRecord({
            seq: plan.seq,
            level: plan.level,
            phase: plan.phase,
            prompt_id: plan.prompt_id,
            attempt: plan.attempt,
            scheduled_at: plan.scheduled_at ?? sentAt,
            sent_at: sentAt,
            end_at: clock.now(),
            error: options.fails?.(plan) ? { class: 'http_5xx', message: 'fake' } : null,
          }),
        )
      }),
    )
  }
  const self: Bench = {
    clock,
    sent: [],
    records: [],
    peak: () => peak,
    run: (share, round) =>
      untilSettled(
        clock,
        runRound(share, round, {
          worker: 0,
          nextSeq: () => seq++,
          nextPromptId: () => promptId++,
          bodyFor: () => Buffer.alloc(0),
          send,
          onRecord: (record) => self.records.push(record),
          stopRequested: () => options.stop?.(self) ?? false,
          clock,
        }),
      ),
  }
  return self
}

/** Moves virtual time 1 ms at a time, letting every promise continuation run between steps. */
async function untilSettled<T>(clock: VirtualClock, round: Promise<T>, limitMs = 60_000): Promise<T> {
  let settled = false
  round.then(
    () => {
      settled = true
    },
    () => {
      settled = true
    },
  )
  for (let step = 0; ; step++) {
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (settled) return round
    if (step >= limitMs) throw new Error(`the round is still running after ${limitMs} virtual ms`)
    clock.advanceBy(1)
  }
}

function closed(concurrency: number, requests: number | null, window: TimedWindow | null = null): LevelShare {
  return { level: concurrency, warmup: 0, retry: 0, window, load: { kind: 'closed', concurrency, requests } }
}

function open(offsets: number[], maxInFlight: number, timeoutMs = 10_000): LevelShare {
  return {
    level: 10,
    warmup: 0,
    retry: 0,
    window: null,
    load: { kind: 'open', offsets: Float64Array.from(offsets), maxInFlight, timeoutMs },
  }
}

const MEASURE_AT_0: Round = { phase: 'measure', startAt: 0 }
const sentTimes = (b: Bench): number[] => b.sent.map((s) => s.at)
const lateness = (b: Bench): number[] => b.records.map((r) => r.sent_at - r.scheduled_at)

test('closed loop: 3 streams over 7 requests issue exactly 7, each stream sending when its last ends', async () => {
  const b = bench({ durationMs: 10 })
  const outcome = await b.run(closed(3, 7), MEASURE_AT_0)
  assert.deepEqual(outcome, { arrivals: null })
  assert.deepEqual(sentTimes(b), [0, 0, 0, 10, 10, 10, 20])
  assert.equal(b.peak(), 3)
  assert.equal(b.records.length, 7)
  // A stream's first request has no earlier wish; the next ones were wanted at the previous end.
  assert.deepEqual(
    b.sent.map((s) => s.plan.scheduled_at),
    [null, null, null, 10, 10, 10, 20],
  )
  assert.deepEqual(new Set(b.records.map((r) => r.phase)), new Set(['measure']))
  assert.equal(b.clock.now(), 30, 'resolves when the last request ends')
})

test('closed loop, staggered: each stream sends its first request at its start, then runs closed-loop', async () => {
  const b = bench({ durationMs: 10 })
  const share = closed(3, 7)
  if (share.load.kind === 'closed') share.load.startOffsets = Float64Array.from([0, 4, 7])
  await b.run(share, { phase: 'measure', startAt: 100 })
  assert.deepEqual(sentTimes(b), [100, 104, 107, 110, 114, 117, 120])
  assert.equal(b.peak(), 3)
  // The warm-up round is not staggered: its streams go at once.
  const w = bench({ durationMs: 10 })
  await w.run({ ...share, warmup: 3 }, { phase: 'warmup' })
  assert.deepEqual(sentTimes(w), [0, 0, 0])
})

test('closed loop, staggered: a stop during the stagger sends nothing from the streams not yet started', async () => {
  const b = bench({ durationMs: 10, stop: (self) => self.clock.now() >= 50 })
  const share = closed(2, 10)
  if (share.load.kind === 'closed') share.load.startOffsets = Float64Array.from([0, 2000])
  await b.run(share, MEASURE_AT_0)
  assert.deepEqual(sentTimes(b), [0, 10, 20, 30, 40])
  assert.ok(
    b.clock.now() < 1000,
    `noticed the stop within a poll, not at the stream's start: ${b.clock.now()}`,
  )
})

test('closed loop: a stop after the 2nd request issues no more; in-flight requests finish', async () => {
  const one = bench({ durationMs: 10, stop: (b) => b.records.length >= 2 })
  await one.run(closed(1, null), MEASURE_AT_0)
  assert.deepEqual(sentTimes(one), [0, 10])
  // Stopped at 15 ms with three requests out: they finish and are recorded, none is added.
  const three = bench({ durationMs: 10, stop: (b) => b.clock.now() >= 15 })
  await three.run(closed(3, null), MEASURE_AT_0)
  assert.deepEqual(sentTimes(three), [0, 0, 0, 10, 10, 10])
  assert.equal(three.records.length, 6)
  assert.equal(three.clock.now(), 20)
})

test('closed loop, timed: warm-up, measured and cool-down windows by send time; none sent past the end', async () => {
  const b = bench({ durationMs: 30 })
  b.clock.advanceBy(1000)
  const window = { warmup_s: 0.1, duration_s: 0.2, cooldown_s: 0.1 }
  await b.run(closed(1, null, window), { phase: 'measure', startAt: 1000 })
  assert.deepEqual(
    sentTimes(b),
    Array.from({ length: 14 }, (_, i) => 1000 + 30 * i),
  )
  assert.deepEqual(
    b.records.map((r) => r.phase),
    [...Array(4).fill('warmup'), ...Array(6).fill('measure'), ...Array(4).fill('cooldown')],
  )
  assert.equal(b.clock.now(), 1420, 'the last request, sent at 1390, drains past the end at 1400')
})

test('warm-up round: every request is warm-up, the share count, a few at a time for an open loop', async () => {
  const b = bench({ durationMs: 10 })
  const share = { ...open([0, 5, 10], 64), warmup: 10 }
  const outcome = await b.run(share, { phase: 'warmup' })
  assert.deepEqual(outcome, { arrivals: null }, 'the schedule is for the measured round')
  assert.equal(b.records.length, 10)
  assert.equal(b.peak(), 4)
  assert.deepEqual(new Set(b.records.map((r) => r.phase)), new Set(['warmup']))
})

test("warm-up round with its own prompts (trace replay): it cycles through them, never a measured row's", async () => {
  const b = bench({ durationMs: 10 })
  const share: LevelShare = { ...open([0, 5, 10], 64), warmup: 7, warmupPrompts: { first: 3, count: 2 } }
  await b.run(share, { phase: 'warmup' })
  assert.deepEqual(
    b.sent.map((s) => s.plan.prompt_id).sort((x, y) => x - y),
    [3, 3, 3, 3, 4, 4, 4],
  )
  // The measured round still sends the rows' own prompts.
  if (share.load.kind === 'open') share.load.promptIds = Float64Array.from([0, 1, 2])
  await b.run(share, MEASURE_AT_0)
  assert.deepEqual(
    b.sent.slice(7).map((s) => s.plan.prompt_id),
    [0, 1, 2],
  )
})

test('open loop: arrivals go at their intended times, whatever is in flight', async () => {
  const b = bench({ durationMs: 500 })
  b.clock.advanceBy(200)
  const outcome = await b.run(open([0, 50, 100], 10), { phase: 'measure', startAt: 250 })
  assert.deepEqual(sentTimes(b), [250, 300, 350])
  assert.deepEqual(lateness(b), [0, 0, 0])
  assert.equal(b.peak(), 3)
  assert.deepEqual(outcome.arrivals, { planned: 3, sent: 3, dropped: 0 })
})

test('open loop: an arrival due at 100 ms that waits for a slot until 130 ms records 30 ms of lateness', async () => {
  const b = bench({ durationMs: 130 })
  const outcome = await b.run(open([0, 100], 1), MEASURE_AT_0)
  assert.deepEqual(sentTimes(b), [0, 130])
  assert.deepEqual(
    b.records.map((r) => r.scheduled_at),
    [0, 100],
  )
  assert.deepEqual(lateness(b), [0, 30])
  assert.deepEqual(outcome.arrivals, { planned: 2, sent: 2, dropped: 0 })
})

test('open loop: arrivals past maxInFlight wait, and are dropped and counted once waiting past the request timeout', async () => {
  const b = bench({ durationMs: 100 })
  const offsets = Array.from({ length: 10 }, (_, i) => i * 10)
  const outcome = await b.run(open(offsets, 1, 50), MEASURE_AT_0)
  // At 100 ms the slot frees: arrivals 10..40 have waited over 50 ms, 50 exactly 50 (sent). At 200 ms
  // the rest have waited 110 ms or more.
  assert.deepEqual(sentTimes(b), [0, 100])
  assert.deepEqual(
    b.records.map((r) => r.scheduled_at),
    [0, 50],
  )
  assert.equal(b.peak(), 1)
  assert.deepEqual(outcome.arrivals, { planned: 10, sent: 2, dropped: 8 })
})

test('open loop: a stop sends nothing more, counts the rest as dropped, and is noticed between arrivals', async () => {
  const b = bench({ durationMs: 10, stop: (self) => self.clock.now() >= 250 })
  const offsets = Array.from({ length: 10 }, (_, i) => i * 100)
  const outcome = await b.run(open(offsets, 4), MEASURE_AT_0)
  assert.deepEqual(sentTimes(b), [0, 100, 200])
  assert.deepEqual(outcome.arrivals, { planned: 10, sent: 3, dropped: 7 })
  assert.ok(b.clock.now() <= 300, `finished at ${b.clock.now()} ms, not at the schedule's end`)
})

test("open loop, timed: a request's window is that of its intended time, not of its late send", async () => {
  const b = bench({ durationMs: 120 })
  const share = { ...open([0, 90, 150, 350], 1), window: { warmup_s: 0.1, duration_s: 0.2, cooldown_s: 0.1 } }
  await b.run(share, MEASURE_AT_0)
  assert.deepEqual(sentTimes(b), [0, 120, 240, 360])
  // Due at 90 (warm-up), sent at 120 (measured window): warm-up. Due at 350: cool-down.
  assert.deepEqual(
    b.records.map((r) => r.phase),
    ['warmup', 'warmup', 'measure', 'cooldown'],
  )
  assert.deepEqual(lateness(b), [0, 30, 90, 10])
})

test('retries are records of their own; a closed retry is wanted when the failed attempt ends', async () => {
  const fails = (plan: RequestPlan): boolean => plan.attempt === 1
  const closedRun = bench({ durationMs: 10, fails })
  await closedRun.run({ ...closed(1, 2), retry: 1 }, MEASURE_AT_0)
  assert.deepEqual(
    closedRun.sent.map((s) => [s.at, s.plan.attempt, s.plan.prompt_id, s.plan.scheduled_at]),
    [
      [0, 1, 0, null],
      [10, 2, 0, 10],
      [20, 1, 1, 20],
      [30, 2, 1, 30],
    ],
  )
  const openRun = bench({ durationMs: 10, fails })
  const outcome = await openRun.run({ ...open([0], 1), retry: 1 }, MEASURE_AT_0)
  assert.deepEqual(
    openRun.sent.map((s) => [s.at, s.plan.attempt, s.plan.scheduled_at]),
    [
      [0, 1, 0],
      [10, 2, 0],
    ],
  )
  assert.deepEqual(outcome.arrivals, { planned: 1, sent: 1, dropped: 0 }, 'one arrival, sent once')
})

test('open loop with prompt ids (trace replay): arrival i sends prompt i at its time, even after a drop', async () => {
  const b = bench({ durationMs: 100 })
  // One slot: arrival 1 (due at 10) waits for arrival 0 (0 to 100) past its 50 ms drop; arrival 2
  // (due at 120) must still send prompt 2, not the next of a sequence that skipped the drop.
  const share = open([0, 10, 120], 1, 50)
  if (share.load.kind === 'open') share.load.promptIds = Float64Array.from([7, 8, 9])
  const outcome = await b.run(share, MEASURE_AT_0)
  assert.deepEqual(outcome.arrivals, { planned: 3, sent: 2, dropped: 1 })
  assert.deepEqual(
    b.sent.map((s) => [s.at, s.plan.prompt_id, s.plan.scheduled_at]),
    [
      [0, 7, 0],
      [120, 9, 120],
    ],
  )
})
