/**
 * The simulator's capacity model, in the spirit of continuous batching (vLLM, TGI):
 *
 * - A request first waits for one of `slots` batch slots (FIFO queue, optionally bounded).
 * - Holding a slot, it runs its prefill: `prefill_base_ms + prefill_ms_per_token * input_tokens`.
 *   The first output token is emitted at the end of the prefill. Prompts that start their prefill in
 *   the same engine step (within one decode step of each other) share that step, as a batching engine
 *   (llama.cpp, vLLM) puts them in one batch: the step costs the sum of their prefills, and every one
 *   of them gets its first token at its end. So five prompts arriving together each see ~5x the
 *   prefill, and a closed loop of identical requests released together stays in lockstep (a convoy).
 * - Then it decodes: each further token comes one decode step later, and a step takes longer the more
 *   sequences are decoding together: `decode_base_ms + decode_ms_per_seq * running`.
 *
 * So below `slots`, more concurrency buys throughput at a slowly rising per-token cost; at `slots` the
 * batch is full, throughput flattens and every extra request waits in the queue, which shows up as TTFT.
 *
 * Everything here is pure: no timers, no I/O. Time enters only through an injected `Scheduler`, so the
 * HTTP server drives the engine with real timers and the tests drive it with `VirtualClock`.
 */

import type { Scheduler } from '../clock.js'
import { type Distribution, summarizeSamples } from '../metrics/distribution.js'
import { staggeredStarts, staggerSpreadMs } from '../schedule/stagger.js'

export interface SimParams {
  /** Batch slots: how many requests can be in prefill or decode at once. Integer >= 1. */
  slots: number
  /** Max requests waiting for a slot; one more is rejected (HTTP 503). 0 = unbounded. */
  queue_limit: number
  /** Fixed prefill cost per request, ms. */
  prefill_base_ms: number
  /** Extra prefill cost per input token, ms: prefill grows with input length. */
  prefill_ms_per_token: number
  /** Prefill cost per input token squared, ms: attention over the prompt makes a long one dearer per token. */
  prefill_ms_per_token_sq: number
  /** Decode step time of a batch of zero, ms. */
  decode_base_ms: number
  /** Extra decode step time per sequence decoding in the batch, ms. */
  decode_ms_per_seq: number
  /** Extra decode step time per token of context the requests in a slot hold (KV read every step), ms. */
  decode_ms_per_context_token: number
  /** Seed of the deterministic text generator (no Math.random anywhere). */
  seed: number
  /**
   * 1 = CPU-like: one compute resource, as llama.cpp on a CPU. Prefills run one at a time, and while
   * one runs no sequence decodes (its due token waits for the prefill to end). With a per-step cost
   * that grows with the batch, throughput then scales sub-linearly from c=1 up to the slots. 0 = off
   * (prefills overlap each other and decoding, as on a GPU with chunked prefill).
   */
  prefill_blocks_decode: number
  /**
   * KV-cache size in tokens, for the `vllm:kv_cache_usage_perc` gauge only: usage = tokens held by
   * the requests in a slot (prompt + tokens generated so far) / this. The model does not evict or
   * preempt, so above it the gauge reads 1. Like a GPU's KV cache, independent of `slots`.
   */
  kv_cache_tokens: number
}

/** Arrivals this close are at the same instant (virtual time has no other jitter). */
const SAME_INSTANT_MS = 1e-6

/** How early a tick may run and still count as on time (below a timer's resolution). */
const EARLY_TICK_MS = 0.05

/**
 * Tuned so that a gradient 1,4,8,16,32,64 with 64 output tokens and ~256 input tokens shows the knee
 * at 16 (see `simulateClosedLoop` and test/unit/sim-capacity.test.ts): output throughput rises about
 * 92 -> 325 -> 560 -> 880 tok/s up to 16, stays at ~880 beyond, while mean TTFT goes from ~33 ms to
 * over a second at 32 (requests queue for a whole request duration).
 */
export const SIM_DEFAULTS: Readonly<SimParams> = Object.freeze({
  slots: 16,
  queue_limit: 0,
  prefill_base_ms: 20,
  prefill_ms_per_token: 0.05,
  prefill_ms_per_token_sq: 0,
  decode_base_ms: 10,
  decode_ms_per_seq: 0.5,
  decode_ms_per_context_token: 0,
  seed: 1,
  prefill_blocks_decode: 0,
  kv_cache_tokens: 65_536,
})

/**
 * The CPU-like preset (`--cpu-like`): prefills block decoding, and a decode step costs ~0.9 ms more
 * per sequence in the batch, as llama.cpp's tiny model on one CPU thread. With 8 slots, 128-token
 * prompts and 64-token outputs, a closed loop gives roughly 80, 130, 190, 250 tok/s at 1, 2, 4, 8,
 * flat beyond 8 while TTFT climbs (see test/unit/sim-capacity.test.ts).
 */
export const SIM_CPU_LIKE: Readonly<Partial<SimParams>> = Object.freeze({
  slots: 8,
  prefill_base_ms: 10,
  prefill_ms_per_token: 0.9,
  decode_base_ms: 10,
  decode_ms_per_seq: 0.9,
  prefill_blocks_decode: 1,
})

/** Defaults overridden by every defined field of `overrides`; throws RangeError on an invalid value. */
export function resolveSimParams(overrides: Partial<SimParams> = {}): SimParams {
  const params: SimParams = { ...SIM_DEFAULTS }
  for (const key of Object.keys(SIM_DEFAULTS) as (keyof SimParams)[]) {
    const value = overrides[key]
    if (value !== undefined) params[key] = value
  }
  validateSimParams(params)
  return params
}

function validateSimParams(p: SimParams): void {
  requireNumber('slots', p.slots, 1, true)
  requireNumber('queue_limit', p.queue_limit, 0, true)
  requireNumber('prefill_base_ms', p.prefill_base_ms, 0, false)
  requireNumber('prefill_ms_per_token', p.prefill_ms_per_token, 0, false)
  requireNumber('decode_base_ms', p.decode_base_ms, 0, false)
  requireNumber('decode_ms_per_seq', p.decode_ms_per_seq, 0, false)
  requireNumber('prefill_ms_per_token_sq', p.prefill_ms_per_token_sq, 0, false)
  requireNumber('decode_ms_per_context_token', p.decode_ms_per_context_token, 0, false)
  requireNumber('seed', p.seed, Number.MIN_SAFE_INTEGER, true)
  requireNumber('prefill_blocks_decode', p.prefill_blocks_decode, 0, true)
  requireNumber('kv_cache_tokens', p.kv_cache_tokens, 1, true)
  if (p.prefill_blocks_decode > 1)
    throw new RangeError(`sim: prefill_blocks_decode must be 0 or 1, got ${p.prefill_blocks_decode}`)
}

function requireNumber(name: string, value: number, min: number, integer: boolean): void {
  const ok = Number.isFinite(value) && value >= min && (!integer || Number.isInteger(value))
  if (!ok)
    throw new RangeError(
      `sim: ${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${value}`,
    )
}

/** Prefill time of one request, ms. */
export function prefillMs(params: SimParams, inputTokens: number): number {
  return (
    params.prefill_base_ms +
    params.prefill_ms_per_token * inputTokens +
    params.prefill_ms_per_token_sq * inputTokens * inputTokens
  )
}

/** Time of one decode step while `running` sequences decode together holding `contextTokens` of KV, ms. */
export function decodeStepMs(params: SimParams, running: number, contextTokens = 0): number {
  return (
    params.decode_base_ms +
    params.decode_ms_per_seq * running +
    params.decode_ms_per_context_token * contextTokens
  )
}

// ---------------------------------------------------------------------------------------------------
// Admission: slots + FIFO queue

export type Admission = 'admitted' | 'queued' | 'rejected'
export type Phase = 'queued' | 'prefill' | 'decode'

/**
 * The admission state machine. A request arrives (admitted to a free slot, queued, or rejected when the
 * queue is full), moves from prefill to decode, and is released (finished or cancelled); releasing a
 * slot admits the oldest queued request, which `release` returns so the caller can start it.
 */
export class AdmissionControl<Id> {
  /** Requests holding a slot, with their phase. */
  private readonly inSlot = new Map<Id, 'prefill' | 'decode'>()
  /** Waiting requests; a Set iterates in insertion order, so its first element is the oldest (FIFO). */
  private readonly queue = new Set<Id>()
  private decodingCount = 0

  constructor(
    private readonly slots: number,
    /** 0 = unbounded */
    private readonly queueLimit: number,
  ) {}

  /** Requests holding a slot (prefill or decode). */
  get running(): number {
    return this.inSlot.size
  }

  /** Requests in the decode phase: the batch size that sets the decode step time. */
  get decoding(): number {
    return this.decodingCount
  }

  get waiting(): number {
    return this.queue.size
  }

  phaseOf(id: Id): Phase | undefined {
    return this.queue.has(id) ? 'queued' : this.inSlot.get(id)
  }

  arrive(id: Id): Admission {
    if (this.phaseOf(id) !== undefined) throw new Error(`sim: request ${String(id)} arrived twice`)
    if (this.inSlot.size < this.slots) {
      this.inSlot.set(id, 'prefill')
      return 'admitted'
    }
    if (this.queueLimit > 0 && this.queue.size >= this.queueLimit) return 'rejected'
    this.queue.add(id)
    return 'queued'
  }

  /** The request's prefill is done: it now counts in the decoding batch. */
  startDecode(id: Id): void {
    if (this.inSlot.get(id) !== 'prefill') throw new Error(`sim: request ${String(id)} is not in prefill`)
    this.inSlot.set(id, 'decode')
    this.decodingCount++
  }

  /**
   * The request finished or was cancelled, in any phase. Returns the id admitted into the freed slot
   * (already in 'prefill'), or undefined. Releasing an unknown id is a no-op.
   */
  release(id: Id): Id | undefined {
    if (this.queue.delete(id)) return undefined
    const phase = this.inSlot.get(id)
    if (phase === undefined) return undefined
    this.inSlot.delete(id)
    if (phase === 'decode') this.decodingCount--
    return this.admitNext()
  }

  private admitNext(): Id | undefined {
    const first = this.queue.values().next()
    if (first.done === true) return undefined
    this.queue.delete(first.value)
    this.inSlot.set(first.value, 'prefill')
    return first.value
  }
}

// ---------------------------------------------------------------------------------------------------
// Engine: per-request timeline on an injected clock

// The engine's only view of time: an injected Scheduler (real timers in the server, VirtualClock in tests).
export type { Scheduler } from '../clock.js'

export interface SimJob {
  inputTokens: number
  /** Tokens to emit, integer >= 1. */
  outputTokens: number
  /**
   * When the request arrived at the server, on the engine's clock (before its body was read, say):
   * TTFT and E2E count from here. Default: the time of `submit`.
   */
  arrivedAt?: number
}

/** One finished request's timeline on the engine's clock, ms. */
export interface JobTimeline {
  arrivedAt: number
  /** submit(): from here to `admittedAt` it waited for a slot. */
  queuedAt: number
  /** It got a slot and its prefill began. */
  admittedAt: number
  /** Its first token was emitted: the end of its prefill. */
  firstTokenAt: number
  /** Its last token was emitted. */
  finishedAt: number
}

/**
 * Receives one request's output. The engine calls `onToken` exactly `outputTokens` times then `onFinish`
 * once, unless the job is cancelled first; it never calls them synchronously from `submit`.
 */
export interface JobSink {
  onToken(index: number): void
  onFinish(timeline: JobTimeline): void
}

/**
 * Sees what the engine does, as a server's own metrics do (see ./vllm-metrics.ts). Called on every
 * token: implementations must be cheap and allocate nothing.
 */
export interface EngineObserver {
  /** A request got a slot after waiting `queuedMs` for it. */
  admitted(queuedMs: number): void
  /** A request's prefill of `inputTokens` ended with its first token, `ttftMs` after it arrived. */
  firstToken(inputTokens: number, ttftMs: number): void
  /** A later token of a request, `gapMs` after that request's previous one. */
  nextToken(gapMs: number): void
  /** A request emitted its last token, `e2eMs` after it arrived. */
  completed(e2eMs: number): void
}

export interface JobHandle {
  readonly admission: Admission
  /** Stops the job's timers and frees its slot or queue place. Idempotent; no-op once finished. */
  cancel(): void
}

export interface SimStats {
  /** Requests that got a slot (directly or from the queue). */
  admitted: number
  /** Requests refused because the queue was full. */
  rejected: number
  /** Requests that emitted all their tokens. */
  completed: number
  /** Requests cancelled (client gone, server closed) before completing. */
  aborted: number
  /** Highest number of slots held at once. */
  max_running: number
  /** Slots held now. */
  running: number
  /** Requests waiting for a slot now. */
  waiting: number
  /** KV-cache tokens held now: prompt + tokens generated so far, of every request in a slot. */
  kv_tokens: number
}

interface ActiveJob<T> {
  readonly id: number
  readonly job: SimJob
  readonly sink: JobSink
  /** Tokens emitted so far. */
  emitted: number
  readonly arrivedAt: number
  readonly queuedAt: number
  /** NaN until it gets a slot. */
  admittedAt: number
  firstTokenAt: number
  /** When its latest token was emitted. */
  lastTokenAt: number
  /** Scheduled time of the next token, ms on the scheduler's clock. */
  deadline: number
  /** The prefill step it shares (null until it gets a slot): its first token comes at the step's end. */
  step: PrefillStep | null
  timer: T | undefined
  /** Bound once per job so the per-token path allocates no closure. */
  readonly tick: () => void
}

/**
 * One engine step that prefills the prompts admitted while it is open: it opens with its first prompt
 * (at once, or in CPU-like mode when the compute is free) and takes every prompt admitted until one
 * decode step after that; each one adds its own prefill to the step's length.
 */
interface PrefillStep {
  startsAt: number
  joinUntil: number
  endsAt: number
  /** Its prompts' ids: they start decoding together, as one batch. */
  readonly members: number[]
}

export class SimEngine<T> {
  private readonly admission: AdmissionControl<number>
  private readonly active = new Map<number, ActiveJob<T>>()
  private nextId = 1
  /** The latest prefill step: prompts admitted before its joinUntil share it. */
  private lastStep: PrefillStep | null = null
  /**
   * CPU-like mode: the step before the latest, whose end the latest one waits for. A decode token due
   * while either runs comes at its end; one due when a step starts came out of the batch before it.
   */
  private stepBefore: PrefillStep | null = null
  private readonly counters = { admitted: 0, rejected: 0, completed: 0, aborted: 0, max_running: 0 }
  /** KV-cache tokens held by the requests in a slot (their KV is allocated when their prefill starts). */
  private kvTokens = 0

  constructor(
    readonly params: SimParams,
    private readonly clock: Scheduler<T>,
    private readonly observer: EngineObserver | null = null,
  ) {
    this.admission = new AdmissionControl(params.slots, params.queue_limit)
  }

  submit(job: SimJob, sink: JobSink): JobHandle {
    if (!Number.isInteger(job.outputTokens) || job.outputTokens < 1) {
      throw new RangeError(`sim: outputTokens must be an integer >= 1, got ${job.outputTokens}`)
    }
    const id = this.nextId++
    const admission = this.admission.arrive(id)
    if (admission === 'rejected') {
      this.counters.rejected++
      return { admission, cancel: noop }
    }
    const now = this.clock.now()
    const entry: ActiveJob<T> = {
      id,
      job,
      sink,
      emitted: 0,
      arrivedAt: job.arrivedAt ?? now,
      queuedAt: now,
      admittedAt: Number.NaN,
      firstTokenAt: Number.NaN,
      lastTokenAt: Number.NaN,
      deadline: 0,
      step: null,
      timer: undefined,
      tick: () => this.tick(entry),
    }
    this.active.set(id, entry)
    if (admission === 'admitted') this.startPrefill(entry)
    return { admission, cancel: () => this.cancel(id) }
  }

  stats(): SimStats {
    return {
      ...this.counters,
      running: this.admission.running,
      waiting: this.admission.waiting,
      kv_tokens: this.kvTokens,
    }
  }

  /** Cancels every queued and running job (server shutdown). */
  cancelAll(): void {
    for (const id of [...this.active.keys()]) this.cancel(id)
  }

  private startPrefill(entry: ActiveJob<T>): void {
    this.counters.admitted++
    this.counters.max_running = Math.max(this.counters.max_running, this.admission.running)
    const now = this.clock.now()
    entry.admittedAt = now
    this.kvTokens += entry.job.inputTokens
    this.observer?.admitted(entry.admittedAt - entry.queuedAt)
    const step = this.prefillStepAt(now)
    step.endsAt += prefillMs(this.params, entry.job.inputTokens)
    step.members.push(entry.id)
    entry.step = step
    entry.deadline = step.endsAt
    entry.timer = this.clock.after(Math.max(0, entry.deadline - now), entry.tick)
  }

  /**
   * The step a prompt admitted `now` is prefilled in: the latest one while it is still open, else a
   * new one, starting now (prefills overlap each other and decoding) or, in CPU-like mode, when the
   * compute is free (cpuLikeStep).
   */
  private prefillStepAt(now: number): PrefillStep {
    const open = this.lastStep
    const cpuLike = this.params.prefill_blocks_decode === 1
    if (open !== null && now < open.joinUntil) return open
    const { startsAt, joinUntil } = cpuLike
      ? this.cpuLikeStep(now, open)
      : { startsAt: now, joinUntil: now + decodeStepMs(this.params, this.admission.decoding, this.kvTokens) }
    if (cpuLike) this.stepBefore = open
    this.lastStep = { startsAt, joinUntil, endsAt: startsAt, members: [] }
    return this.lastStep
  }

  /**
   * CPU-like mode, as llama.cpp on one compute resource runs its loop: each iteration is one batch of
   * the prompts that arrived before it began and a token of every decoding sequence. So a new step
   * starts when the prefill step before it ends and the decode step under way has given its tokens
   * (a prompt arriving mid-step is not computed into it), and takes the prompts that arrive until it
   * starts. When it waits on a decode step only, the requests that step completes send their next
   * prompts as its tokens come out, after the batch was formed: they join the step after.
   * On the kit (4 slots, 384/24 at c=4) one request is prefilled alone, the other three then together
   * while it stalls, and the three decode unstalled (TPOT 19–24 ms); a prompt started mid-decode-step
   * instead stalled every group by the next one's prefill (TPOT 42–91 ms replayed).
   */
  private cpuLikeStep(now: number, open: PrefillStep | null): { startsAt: number; joinUntil: number } {
    const afterPrefill = Math.max(now, open?.endsAt ?? now)
    // The decode step under way: the tokens the decoding sequences have due, first and last (one due
    // at this instant whose tick has not run yet has its next one a step from now).
    const step = now + decodeStepMs(this.params, this.admission.decoding, this.kvTokens)
    let first = Number.POSITIVE_INFINITY
    let last = now
    for (const entry of this.active.values()) {
      if (entry.emitted === 0 || entry.timer === undefined) continue
      const due = entry.deadline > now ? entry.deadline : step
      if (due < first) first = due
      if (due > last) last = due
    }
    // Started at once on an idle engine, it takes the prompts of this very instant (a closed loop's
    // streams started together) and no later one.
    if (afterPrefill === now && last === now) return { startsAt: now, joinUntil: now + SAME_INSTANT_MS }
    if (afterPrefill >= last) return { startsAt: afterPrefill, joinUntil: afterPrefill }
    return { startsAt: last, joinUntil: first }
  }

  /**
   * Schedules against absolute deadlines (previous deadline + duration), not "now + duration", so
   * timer lateness does not accumulate over a stream: the mean token gap stays the modelled step.
   */
  private scheduleIn(entry: ActiveJob<T>, ms: number): void {
    entry.deadline += ms
    entry.timer = this.clock.after(Math.max(0, entry.deadline - this.clock.now()), entry.tick)
  }

  /** One token is due: the first one ends the prefill, the last one ends the request. */
  private tick(entry: ActiveJob<T>): void {
    entry.timer = undefined
    // A timer may fire before its deadline (libuv counts from the loop's cached time, in whole ms):
    // a token never comes before the model says, so the rest of the wait is waited.
    const early = entry.deadline - this.clock.now()
    if (early > EARLY_TICK_MS) {
      entry.timer = this.clock.after(early, entry.tick)
      return
    }
    // The first token comes at the end of its prefill step, which prompts joining it made longer.
    const stepEnd = entry.emitted === 0 ? (entry.step?.endsAt ?? entry.deadline) : entry.deadline
    if (entry.deadline < stepEnd) {
      entry.deadline = stepEnd
      entry.timer = this.clock.after(Math.max(0, entry.deadline - this.clock.now()), entry.tick)
      return
    }
    const blockedUntil = entry.emitted > 0 ? this.prefillRunningAt(entry.deadline) : null
    if (blockedUntil !== null) {
      // CPU-like mode: a decode token due while a prefill runs comes after it.
      entry.deadline = blockedUntil
      entry.timer = this.clock.after(Math.max(0, entry.deadline - this.clock.now()), entry.tick)
      return
    }
    if (entry.emitted === 0) this.startDecoding(entry)
    const index = entry.emitted
    // Counted before the sink runs: a sink that cancels the job then frees this token's KV too.
    this.noteToken(entry)
    entry.sink.onToken(index)
    if (!this.active.has(entry.id)) return // the sink cancelled the job
    if (entry.emitted < entry.job.outputTokens) {
      this.scheduleIn(entry, decodeStepMs(this.params, this.admission.decoding, this.kvTokens))
    } else {
      this.complete(entry)
    }
  }

  /**
   * A prefill step's first token: every prompt of the step decodes from now on, so they all take
   * their decode steps at the batch size they share (a batch stays in step, as in a stepped engine).
   */
  private startDecoding(entry: ActiveJob<T>): void {
    for (const id of entry.step?.members ?? [entry.id])
      if (this.admission.phaseOf(id) === 'prefill') this.admission.startDecode(id)
  }

  /** CPU-like mode: the end of the prefill step running at `time` (after its start), or null. */
  private prefillRunningAt(time: number): number | null {
    if (this.params.prefill_blocks_decode !== 1) return null
    for (const step of [this.lastStep, this.stepBefore])
      if (step !== null && time > step.startsAt && time < step.endsAt) return step.endsAt
    return null
  }

  /** Bookkeeping of a token just written: KV grows by one, the observer sees TTFT or the gap. */
  private noteToken(entry: ActiveJob<T>): void {
    const now = this.clock.now()
    if (entry.emitted === 0) {
      entry.firstTokenAt = now
      this.observer?.firstToken(entry.job.inputTokens, now - entry.arrivedAt)
    } else {
      this.observer?.nextToken(now - entry.lastTokenAt)
    }
    entry.lastTokenAt = now
    entry.emitted++
    this.kvTokens++
  }

  private complete(entry: ActiveJob<T>): void {
    this.active.delete(entry.id)
    const next = this.admission.release(entry.id)
    this.freeKv(entry)
    this.counters.completed++
    this.observer?.completed(entry.lastTokenAt - entry.arrivedAt)
    entry.sink.onFinish({
      arrivedAt: entry.arrivedAt,
      queuedAt: entry.queuedAt,
      admittedAt: entry.admittedAt,
      firstTokenAt: entry.firstTokenAt,
      finishedAt: entry.lastTokenAt,
    })
    this.startAdmitted(next)
  }

  /** A request leaving its slot frees its KV; a queued one never held any. */
  private freeKv(entry: ActiveJob<T>): void {
    if (!Number.isNaN(entry.admittedAt)) this.kvTokens -= entry.job.inputTokens + entry.emitted
  }

  private cancel(id: number): void {
    const entry = this.active.get(id)
    if (entry === undefined) return
    this.active.delete(id)
    if (entry.timer !== undefined) this.clock.cancel(entry.timer)
    this.freeKv(entry)
    this.counters.aborted++
    this.startAdmitted(this.admission.release(id))
  }

  private startAdmitted(id: number | undefined): void {
    if (id === undefined) return
    const entry = this.active.get(id)
    if (entry !== undefined) this.startPrefill(entry)
  }
}

function noop(): void {}

// ---------------------------------------------------------------------------------------------------
// Virtual time: for unit tests and for predicting a gradient without waiting for it

/** A virtual timer: when it fires, its order among timers of the same time, what it runs. */
interface VirtualTimer {
  at: number
  id: number
  fn: () => void
}

/**
 * A fake clock: timers fire in time order (ties in scheduling order) only when the clock is advanced.
 * A binary heap keyed by (time, id): a prediction runs hundreds of streams through hundreds of
 * thousands of token events, where scanning every pending timer per event took seconds.
 */
export class VirtualClock implements Scheduler<number> {
  private t = 0
  private seq = 0
  /**
   * Ids of cancelled timers: one leaves the heap lazily, when it comes to the top. A set of the few
   * cancelled rather than a map of every live timer: a prediction schedules millions of timers and
   * cancels almost none, and a map entry set and deleted per token was a fifth of its time.
   */
  private readonly cancelled = new Set<number>()
  private readonly heap: VirtualTimer[] = []

  now(): number {
    return this.t
  }

  after(ms: number, fn: () => void): number {
    const timer = { at: this.t + Math.max(0, ms), id: ++this.seq, fn }
    this.push(timer)
    return timer.id
  }

  cancel(timer: number): void {
    if (this.heap.some((pending) => pending.id === timer)) this.cancelled.add(timer)
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.heap.length - this.cancelled.size
  }

  /** Runs every timer due within the next `ms`, then sets the clock to now + ms. */
  advanceBy(ms: number): void {
    const until = this.t + ms
    while (this.fireNext(until)) {}
    this.t = until
  }

  /** Runs timers until none is left; throws after `maxEvents` (a job that never ends is a bug). */
  runAll(maxEvents = 10_000_000): void {
    for (let i = 0; this.fireNext(Number.POSITIVE_INFINITY); i++) {
      if (i >= maxEvents) throw new Error('sim: VirtualClock.runAll exceeded maxEvents')
    }
  }

  private fireNext(until: number): boolean {
    for (;;) {
      const top = this.heap[0]
      if (top === undefined || top.at > until) return false
      this.pop()
      if (this.cancelled.size > 0 && this.cancelled.delete(top.id)) continue
      this.t = top.at
      top.fn()
      return true
    }
  }

  private push(timer: VirtualTimer): void {
    const heap = this.heap
    let i = heap.push(timer) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(timer, heap[parent] as VirtualTimer)) break
      heap[i] = heap[parent] as VirtualTimer
      i = parent
    }
    heap[i] = timer
  }

  private pop(): void {
    const heap = this.heap
    const last = heap.pop() as VirtualTimer
    if (heap.length === 0) return
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= heap.length) break
      const right = left + 1
      const child =
        right < heap.length && before(heap[right] as VirtualTimer, heap[left] as VirtualTimer) ? right : left
      if (!before(heap[child] as VirtualTimer, last)) break
      heap[i] = heap[child] as VirtualTimer
      i = child
    }
    heap[i] = last
  }
}

function before(a: VirtualTimer, b: VirtualTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.id < b.id)
}

/**
 * Requests a simulated level of `streams` runs to read its steady throughput: a few per stream (virtual
 * time has no noise to average away). A third of the 100-400 first used made predictions, the report's
 * "What if" and every result's fit 3x faster, their figures within 1%.
 */
export function simulatedRequests(streams: number): number {
  return Math.min(192, Math.max(48, 4 * streams))
}

export interface ClosedLoopLoad {
  /** Requests kept in flight. */
  concurrency: number
  /** Requests in total. */
  requests: number
  inputTokens: number
  outputTokens: number
  /**
   * How the streams start: "staggered" (default), their first sends spread over three quarters of one
   * request's duration at c=1 as llmbench sends them (src/schedule/stagger.ts); "together", all at once.
   */
  start?: 'staggered' | 'together'
}

export interface LevelPrediction {
  concurrency: number
  /**
   * Output tokens emitted while every stream was running / that time: from the last stream's first
   * send to the first moment a stream ran out of requests (the whole run when that span is empty).
   */
  output_tokens_per_s: number
  mean_ttft_ms: number
  mean_e2e_ms: number
  /** Mean time from getting a slot to the first token: the server's own prefill (llama.cpp's prompt_ms). */
  mean_prefill_ms: number
  max_running: number
  /** Per-request distributions (mean and the percentiles asked for), for SLO checks on a prediction. */
  ttft_ms: Distribution
  tpot_ms: Distribution
  e2e_ms: Distribution
}

/** The percentiles simulateClosedLoop reports when not told: those SLOs are most often set on. */
const PREDICTED_PERCENTILES: readonly number[] = [50, 90, 95, 99]

/**
 * What a closed-loop client (`concurrency` requests in flight, a new one sent as soon as one finishes)
 * would measure against the model, in virtual time, with zero network and client overhead.
 */
export function simulateClosedLoop(
  params: SimParams,
  load: ClosedLoopLoad,
  percentiles: readonly number[] = PREDICTED_PERCENTILES,
  /** Virtual time; another implementation only to measure this one against (bench/virtual-clock.ts). */
  clock: Scheduler<number> & { runAll(): void } = new VirtualClock(),
): LevelPrediction {
  const engine = new SimEngine(params, clock)
  const job: SimJob = { inputTokens: load.inputTokens, outputTokens: load.outputTokens }
  const streams = Math.min(load.concurrency, load.requests)
  const oneRequestMs =
    prefillMs(params, load.inputTokens) +
    (load.outputTokens - 1) * decodeStepMs(params, 1, load.inputTokens + load.outputTokens / 2)
  const starts =
    load.start === 'together'
      ? new Float64Array(streams)
      : staggeredStarts(streams, staggerSpreadMs(oneRequestMs, null), params.seed)
  const steady = { from: Math.max(0, ...starts), until: Number.POSITIVE_INFINITY }
  const tokenTimes: number[] = []
  const ttfts: number[] = []
  const tpots: number[] = []
  const e2es: number[] = []
  let sent = 0
  let prefillSum = 0
  const send = (): void => {
    sent++
    const start = clock.now()
    engine.submit(job, {
      onToken: (i) => {
        tokenTimes.push(clock.now())
        if (i === 0) ttfts.push(clock.now() - start)
      },
      onFinish: (timeline) => {
        const e2e = clock.now() - start
        e2es.push(e2e)
        if (load.outputTokens > 1)
          tpots.push((timeline.finishedAt - timeline.firstTokenAt) / (load.outputTokens - 1))
        prefillSum += timeline.firstTokenAt - timeline.admittedAt
        if (sent < load.requests) send()
        else steady.until = Math.min(steady.until, clock.now())
      },
    })
  }
  for (const at of starts) clock.after(at, send)
  clock.runAll()
  const inSteady = tokenTimes.filter((t) => t > steady.from && t <= steady.until).length
  const span = steady.until - steady.from
  return {
    concurrency: load.concurrency,
    output_tokens_per_s:
      span > 0 && inSteady > 0 ? (inSteady * 1000) / span : (sent * load.outputTokens * 1000) / clock.now(),
    mean_ttft_ms: mean(ttfts),
    mean_e2e_ms: mean(e2es),
    mean_prefill_ms: prefillSum / sent,
    max_running: engine.stats().max_running,
    ttft_ms: summarizeSamples(ttfts, percentiles),
    tpot_ms: summarizeSamples(tpots, percentiles),
    e2e_ms: summarizeSamples(e2es, percentiles),
  }
}

function mean(values: readonly number[]): number {
  let sum = 0
  for (const value of values) sum += value
  return values.length === 0 ? 0 : sum / values.length
}
