import type { Dispatcher } from 'undici'
import type { ShardCoordination } from '../../result/run-meta.js'
import type { StopSignal } from '../stop-signal.js'
import {
  bestOffset,
  CLOCK_GAP_MS,
  CLOCK_SAMPLES,
  type ClockSample,
  type Event,
  HEARTBEAT_MS,
  type Incomplete,
  type Register,
} from './coordination-protocol.js'

/** The coordinator refused the shard, or could not be reached: the shard cannot run as part of the whole. */
export class CoordinationError extends Error {
  override name = 'CoordinationError'
}

/** How long a shard keeps trying to reach a coordinator that is not up yet (pods start in any order, images are pulled). */
const CONNECT_PATIENCE_MS = 300_000

/** What the run asks of the coordinator around each level (run-gradient.ts). */
export interface LevelCoordination {
  /** Resolves at the level's start instant (early, with the stop requested, when the run was ended). */
  beforeLevel(level: number, value: number): Promise<void>
  /** Resolves when every shard finished the level, or the run was ended. */
  afterLevel(level: number, interrupted: boolean): Promise<void>
  /** No more levels from this shard: said before the report, whose drawing may hold the main thread for seconds. */
  finish(): Promise<void>
}

/**
 * A shard's side of the protocol (coordination-protocol.ts): it measures its clock against the
 * coordinator's, registers, keeps a heartbeat and the events stream, and waits on the coordinator
 * around each level. `info` is the live account that goes into the shard's result (meta.shard.coordinator).
 * A lost coordinator or a lost shard elsewhere ends the run: the stop is requested and `info.ended` says why.
 */
export class CoordinatorLink implements LevelCoordination {
  readonly info: ShardCoordination
  private readonly events: Event[] = []
  private readonly waiters = new Set<() => void>()
  private heartbeat: NodeJS.Timeout | null = null
  private stream: Dispatcher.ResponseData | null = null
  private finished = false

  private constructor(
    private readonly url: string,
    private readonly shard: number,
    private readonly clock: () => number,
    private readonly dispatcher: Dispatcher,
    private readonly stop: StopSignal,
    private readonly log: (line: string) => void,
    measured: { offset_ms: number; bound_ms: number; rtt_ms: number },
  ) {
    this.info = { url, ...measured, levels: [], ended: null }
  }

  /** Measures the clock, registers and opens the events stream; throws CoordinationError when refused or unreachable. */
  static async connect(
    url: string,
    identity: Omit<Register, 'offset_ms' | 'bound_ms' | 'rtt_ms'>,
    session: { clock: () => number; stop: StopSignal; log: (line: string) => void },
  ): Promise<CoordinatorLink> {
    const { Pool } = await import('undici')
    const base = url.replace(/\/+$/, '')
    const dispatcher = new Pool(base, { connections: 3, pipelining: 0 })
    try {
      const samples = await measureClock(base, dispatcher, session.clock, session.stop.setupInterrupt)
      const offset = bestOffset(samples)
      const register: Register = { ...identity, ...offset }
      await post(dispatcher, base, '/register', register)
      const link = new CoordinatorLink(
        base,
        identity.shard,
        session.clock,
        dispatcher,
        session.stop,
        session.log,
        offset,
      )
      await link.open()
      session.log(
        `shard ${identity.shard}/${identity.count}: coordinator ${base}, clock offset ${offset.offset_ms} ms ± ${offset.bound_ms} ms (best round trip ${offset.rtt_ms} ms of ${samples.length})`,
      )
      return link
    } catch (error) {
      await dispatcher.destroy().catch(() => {})
      if (error instanceof CoordinationError) throw error
      throw new CoordinationError(
        `coordinator ${base}: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
  }

  private async open(): Promise<void> {
    this.stream = await this.dispatcher.request({
      origin: this.url,
      path: `/events?shard=${this.shard}`,
      method: 'GET',
      headersTimeout: 10_000,
      bodyTimeout: 0,
    })
    if (this.stream.statusCode !== 200)
      throw new CoordinationError(`events: HTTP ${this.stream.statusCode}: ${await this.stream.body.text()}`)
    void this.readEvents(this.stream)
    this.heartbeat = setInterval(() => {
      post(this.dispatcher, this.url, '/heartbeat', { shard: this.shard }).catch(() => {})
    }, HEARTBEAT_MS)
  }

  private async readEvents(stream: Dispatcher.ResponseData): Promise<void> {
    let buffered = ''
    try {
      for await (const chunk of stream.body) {
        buffered += String(chunk)
        let newline = buffered.indexOf('\n')
        while (newline >= 0) {
          this.receive(JSON.parse(buffered.slice(0, newline)) as Event)
          buffered = buffered.slice(newline + 1)
          newline = buffered.indexOf('\n')
        }
      }
    } catch {
      // Treated as the stream ending, below.
    }
    if (!this.finished)
      this.end({ shard: null, at_ms: this.coordinatorNow(), reason: 'the coordinator was lost' })
  }

  private receive(event: Event): void {
    if (event.type === 'abort') this.end(event.incomplete)
    this.events.push(event)
    for (const wake of this.waiters) wake()
  }

  /** The run is over for this shard: the level in progress is incomplete, the run stops. */
  private end(incomplete: Incomplete): void {
    if (this.info.ended !== null) return
    this.info.ended = incomplete
    const level = this.info.levels.at(-1)
    if (level !== undefined && level.complete === null) {
      level.complete = false
      level.incomplete = incomplete
    }
    this.log(`coordinator: ${incomplete.reason}; stopping (the level in progress is marked incomplete)`)
    this.stop.request()
    for (const wake of this.waiters) wake()
  }

  private coordinatorNow(): number {
    return Math.round((this.clock() + this.info.offset_ms) * 10) / 10
  }

  /** The first event `pick` accepts; null once the run has ended without it. */
  private async waitFor(pick: (event: Event) => boolean): Promise<Event | null> {
    for (;;) {
      const found = this.events.find(pick)
      if (found !== undefined) return found
      if (this.info.ended !== null) return null
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake)
          resolve()
        }
        this.waiters.add(wake)
      })
    }
  }

  async beforeLevel(level: number, value: number): Promise<void> {
    if (this.info.ended !== null) return
    await post(this.dispatcher, this.url, '/ready', { shard: this.shard, level, value }).catch(() => {})
    const start = await this.waitFor((event) => event.type === 'start' && event.level === level)
    if (start === null || start.type !== 'start') return
    const entry = {
      level,
      value,
      start_at_ms: start.at_ms,
      started_ms: start.at_ms,
      complete: null as boolean | null,
      incomplete: null as Incomplete | null,
    }
    this.info.levels.push(entry)
    // The instant is on the coordinator's clock: on this shard's clock it is at − offset.
    await sleepUntil(start.at_ms - this.info.offset_ms, this.clock)
    entry.started_ms = this.coordinatorNow()
  }

  async afterLevel(level: number, interrupted: boolean): Promise<void> {
    const entry = this.info.levels.find((one) => one.level === level)
    if (entry === undefined || this.info.ended !== null) return
    await post(this.dispatcher, this.url, '/done', {
      shard: this.shard,
      level,
      started_ms: entry.started_ms,
      interrupted,
    }).catch(() => {})
    const end = await this.waitFor((event) => event.type === 'end' && event.level === level)
    if (end !== null && end.type === 'end' && entry.complete === null) entry.complete = end.complete
  }

  async finish(): Promise<void> {
    if (this.finished) return
    this.finished = true
    if (this.heartbeat !== null) clearInterval(this.heartbeat)
    if (this.info.ended === null)
      await post(this.dispatcher, this.url, '/finish', { shard: this.shard }).catch(() => {})
  }

  /**
   * The connections closed. Without finish() first (a run that threw), the coordinator sees this
   * shard lost, which it is.
   */
  async close(): Promise<void> {
    this.finished = true
    if (this.heartbeat !== null) clearInterval(this.heartbeat)
    this.stream?.body.destroy()
    await this.dispatcher.destroy().catch(() => {})
  }
}

async function measureClock(
  base: string,
  dispatcher: Dispatcher,
  clock: () => number,
  interrupt: AbortSignal,
): Promise<ClockSample[]> {
  const samples: ClockSample[] = []
  const patience = Date.now() + CONNECT_PATIENCE_MS
  while (samples.length < CLOCK_SAMPLES) {
    const t0 = clock()
    let answer: { received_ms: number; sent_ms: number }
    try {
      const response = await dispatcher.request({
        origin: base,
        path: `/time?t0=${t0}`,
        method: 'GET',
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
        signal: interrupt,
      })
      answer = (await response.body.json()) as typeof answer
    } catch (error) {
      // Not up yet (pods start in any order): tried again until the patience runs out.
      if (interrupt.aborted || Date.now() > patience) throw error
      await new Promise((resolve) => setTimeout(resolve, 500))
      continue
    }
    const t3 = clock()
    samples.push({ t0, t1: answer.received_ms, t2: answer.sent_ms, t3 })
    await new Promise((resolve) => setTimeout(resolve, CLOCK_GAP_MS))
  }
  return samples
}

async function post(dispatcher: Dispatcher, origin: string, path: string, body: unknown): Promise<unknown> {
  const response = await dispatcher.request({
    origin,
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  })
  const answer = (await response.body.json()) as { error?: string }
  if (response.statusCode !== 200)
    throw new CoordinationError(`${path}: refused: ${answer.error ?? `HTTP ${response.statusCode}`}`)
  return answer
}

/**
 * A timer fires a few ms late, or early (libuv counts in whole ms): it is set this far before the
 * instant, and the rest is slept in the kernel.
 */
const TIMER_EARLY_MS = 5
/** A futex to sleep on with a sub-millisecond timeout: nothing ever wakes it. */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4))

/**
 * Waits until `clock()` reaches `target`: a timer to within TIMER_EARLY_MS, then a blocking sleep
 * (the event loop has nothing to do at a level's start but start it).
 */
async function sleepUntil(target: number, clock: () => number): Promise<void> {
  const coarse = target - clock() - TIMER_EARLY_MS
  if (coarse > 0) await new Promise((resolve) => setTimeout(resolve, coarse))
  // The last milliseconds asleep (a futex wait wakes within tens of µs of its timeout), not spinning:
  // four shards spinning at once on two cores took turns for the CPU and started up to 14 ms late.
  const left = target - clock()
  if (left > 0) Atomics.wait(SLEEPER, 0, 0, left)
  while (clock() < target) {
    // What the futex's slack left, if anything: microseconds.
  }
}
