import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  DEAD_AFTER_MS,
  type Done,
  type Event,
  type Incomplete,
  MIN_LEAD_MS,
  type Ready,
  type Register,
} from './coordination-protocol.js'
import { wallClock } from './shard-clock.js'

/**
 * `llmbench coordinate`: the one clock and the one start of a sharded run. It waits for `shards`
 * shards, starts each level at one instant on its own clock once all are ready for it (each shard
 * translates the instant by its measured offset), ends it when all have said they finished, and ends
 * the run the moment a shard is lost: the level in progress is marked incomplete, with the shard and
 * the time, and the others are told to stop. See coordination-protocol.ts for the messages.
 */
export interface CoordinatorOptions {
  shards: number
  host: string
  /** 0 = a free port. */
  port: number
  log: (line: string) => void
  /** No heartbeat for this long = dead. Default DEAD_AFTER_MS. */
  deadAfterMs?: number
}

export interface CoordinatedShard extends Omit<Register, 'shard' | 'count' | 'config_digest'> {
  shard: number
  /** Lost: when and how; null = it finished, or is still running. */
  lost: Incomplete | null
}

export interface CoordinatorLevel {
  level: number
  value: number
  /** The start instant given to every shard, coordinator clock (ms since the epoch). */
  start_at_ms: number
  /** Each shard's own start, as it reported it, coordinator clock; by shard index. */
  started_ms: Record<string, number>
  /** Latest shard start minus earliest, ms; null until all reported. */
  start_spread_ms: number | null
  ended_ms: number | null
  complete: boolean
  incomplete: Incomplete | null
}

export interface CoordinationReport {
  shards: CoordinatedShard[]
  levels: CoordinatorLevel[]
  /** What ended the run early; null = every shard finished every level. */
  incomplete: Incomplete | null
}

export interface RunningCoordinator {
  url: string
  /** Resolves when every shard finished, or at the first loss. */
  done: Promise<CoordinationReport>
  close(): Promise<void>
}

interface ShardState {
  register: Register
  events: ServerResponse | null
  lastSeen: number
  ready: Ready | null
  finished: boolean
  lost: Incomplete | null
}

export async function startCoordinator(options: CoordinatorOptions): Promise<RunningCoordinator> {
  const now = wallClock()
  const deadAfter = options.deadAfterMs ?? DEAD_AFTER_MS
  const run = new Coordination(options, now)
  const server = createServer(routes(run, now))

  const watchdog = setInterval(() => {
    for (const state of run.shards.values())
      if (now() - state.lastSeen > deadAfter) run.lose(state, `no heartbeat for ${deadAfter} ms`)
  }, 100)
  watchdog.unref()
  void run.done.then(() => clearInterval(watchdog))

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    done: run.done,
    async close() {
      clearInterval(watchdog)
      for (const state of run.shards.values()) state.events?.end()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

type Handler = (body: unknown, res: ServerResponse) => unknown

/** The HTTP face of a coordination: GETs answered at once, POSTs read as JSON and handed to `run`. */
function routes(run: Coordination, now: () => number) {
  const handlers: Record<string, Handler> = {
    'POST /register': (body, res) => run.register(body as Register, res),
    'POST /heartbeat': (body) => run.heartbeat(body),
    'POST /ready': (body, res) => run.ready(body as Ready, res),
    'POST /done': (body, res) => run.levelDone(body as Done, res),
    'POST /finish': (body) => run.shardFinished(body),
  }
  return (req: IncomingMessage, res: ServerResponse) => {
    const received = now()
    const url = new URL(req.url ?? '/', 'http://coordinator')
    const route = `${req.method} ${url.pathname}`
    if (route === 'GET /time') return json(res, 200, { received_ms: received, sent_ms: now() })
    if (route === 'GET /events') return run.openEvents(url, req, res)
    if (route === 'GET /status') return json(res, 200, run.report())
    const handler = handlers[route]
    if (handler === undefined) return json(res, 404, { error: `no ${route}` })
    readJson(req)
      .then((body) => {
        const answer = handler(body, res)
        if (!res.headersSent) json(res, 200, answer)
      })
      .catch((error: unknown) => json(res, 400, { error: String(error) }))
  }
}

/**
 * The state of one coordinated run, and what each message from a shard does to it. One object so
 * the handlers, the events streams and the watchdog all see the same shards, levels and end.
 */
class Coordination {
  readonly shards = new Map<number, ShardState>()
  readonly levels: CoordinatorLevel[] = []
  private digest: string | null = null
  private ended: Incomplete | null = null
  private settled = false
  private settle: (report: CoordinationReport) => void = () => {}
  /** Resolves when every shard finished, or at the first loss. */
  readonly done = new Promise<CoordinationReport>((resolve) => {
    this.settle = resolve
  })
  private readonly options: CoordinatorOptions
  private readonly now: () => number

  constructor(options: CoordinatorOptions, now: () => number) {
    this.options = options
    this.now = now
  }

  report(): CoordinationReport {
    return {
      shards: [...this.shards.values()]
        .map((state) => {
          const { shard, host, offset_ms, bound_ms, rtt_ms } = state.register
          return { shard, host, offset_ms, bound_ms, rtt_ms, lost: state.lost }
        })
        .sort((a, b) => a.shard - b.shard),
      levels: this.levels,
      incomplete: this.ended,
    }
  }

  private finish(): void {
    if (this.settled) return
    this.settled = true
    this.settle(this.report())
  }

  private broadcast(event: Event): void {
    for (const state of this.shards.values())
      if (state.lost === null && !state.finished) state.events?.write(`${JSON.stringify(event)}\n`)
  }

  private current(): CoordinatorLevel | undefined {
    const level = this.levels.at(-1)
    return level !== undefined && level.ended_ms === null ? level : undefined
  }

  private stateOf(body: unknown): ShardState | undefined {
    return this.shards.get((body as { shard?: unknown } | null)?.shard as number)
  }

  /** Ends the run: the level in progress (if any) is incomplete, the others are told to stop. */
  private abort(incomplete: Incomplete): void {
    if (this.ended !== null || this.settled) return
    this.ended = incomplete
    const level = this.current()
    if (level !== undefined) {
      level.ended_ms = incomplete.at_ms
      level.complete = false
      level.incomplete = incomplete
    }
    const where = level === undefined ? 'between levels' : `during level ${level.value}`
    this.options.log(
      `coordinate: ${incomplete.reason} ${where} at ${new Date(incomplete.at_ms).toISOString()}; the run is ended`,
    )
    this.broadcast({ type: 'abort', level: level?.level ?? null, incomplete })
    this.finish()
  }

  lose(state: ShardState, reason: string): void {
    if (state.lost !== null || state.finished || this.ended !== null) return
    const shard = state.register.shard
    state.lost = { shard, at_ms: round1(this.now()), reason: `shard ${shard} lost (${reason})` }
    this.abort(state.lost)
  }

  /** All registered and ready for the same next level: start it at one instant. */
  private maybeStart(): void {
    if (this.ended !== null || this.current() !== undefined || this.shards.size < this.options.shards) return
    const states = [...this.shards.values()]
    const next = this.levels.length
    if (!states.every((state) => state.ready?.level === next)) return
    const values = new Set(states.map((state) => state.ready?.value))
    if (values.size > 1) {
      this.abort({
        shard: null,
        at_ms: round1(this.now()),
        reason: `the shards asked for different levels at position ${next + 1}: ${[...values].join(', ')}`,
      })
      return
    }
    // Long enough for the start to reach the farthest shard (a few of its round trips) before it is due.
    const lead = Math.max(MIN_LEAD_MS, ...states.map((state) => 4 * state.register.rtt_ms))
    const level: CoordinatorLevel = {
      level: next,
      value: states[0]?.ready?.value as number,
      start_at_ms: round1(this.now() + lead),
      started_ms: {},
      start_spread_ms: null,
      ended_ms: null,
      complete: false,
      incomplete: null,
    }
    this.levels.push(level)
    for (const state of states) state.ready = null
    this.broadcast({ type: 'start', level: level.level, value: level.value, at_ms: level.start_at_ms })
  }

  /** POST /register: a shard joins, unless it is malformed, a duplicate or from another run. */
  register(register: Register, res: ServerResponse): unknown {
    const problem = this.registerProblem(register)
    const refusal =
      problem ??
      (this.shards.has(register.shard)
        ? `shard ${register.shard} is registered already`
        : this.digest !== null && register.config_digest !== this.digest
          ? `shard ${register.shard} belongs to another run (config digest ${register.config_digest}, the others' ${this.digest})`
          : null)
    if (refusal !== null) {
      // Said here too: the run waits for a shard that was turned away.
      this.options.log(`coordinate: refused a registration: ${refusal}`)
      return refuse(res, refusal)
    }
    this.digest = register.config_digest
    this.shards.set(register.shard, {
      register,
      events: null,
      lastSeen: this.now(),
      ready: null,
      finished: false,
      lost: null,
    })
    this.options.log(
      `coordinate: shard ${register.shard}/${register.count} on ${register.host}: clock offset ${register.offset_ms} ms ± ${register.bound_ms} ms (${this.shards.size} of ${this.options.shards} registered)`,
    )
    return { ok: true }
  }

  private registerProblem(register: Register): string | null {
    const count = this.options.shards
    if (!Number.isInteger(register?.shard) || register.shard < 0 || register.shard >= count)
      return `shard must be an index 0..${count - 1}`
    if (register.count !== count)
      return `the run is split ${register.count} ways; this coordinator was started for ${count} shards`
    if (![register.offset_ms, register.bound_ms, register.rtt_ms].every(Number.isFinite))
      return 'offset_ms, bound_ms and rtt_ms must be numbers'
    if (this.ended !== null) return 'the run has ended'
    return null
  }

  heartbeat(body: unknown): unknown {
    const state = this.stateOf(body)
    if (state !== undefined) state.lastSeen = this.now()
    return { ok: true }
  }

  ready(ready: Ready, res: ServerResponse): unknown {
    const state = this.stateOf(ready)
    if (state === undefined) return refuse(res, 'not registered')
    state.lastSeen = this.now()
    state.ready = ready
    this.maybeStart()
    return { ok: true }
  }

  /** POST /done: a shard finished the level; the level ends when every shard has. */
  levelDone(report: Done, res: ServerResponse): unknown {
    const state = this.stateOf(report)
    const level = this.current()
    if (state === undefined) return refuse(res, 'not registered')
    if (level === undefined || level.level !== report.level) return { ok: true }
    level.started_ms[String(report.shard)] = round1(report.started_ms)
    if (report.interrupted)
      this.abort({
        shard: report.shard,
        at_ms: round1(this.now()),
        reason: `shard ${report.shard} stopped its level`,
      })
    const started = Object.values(level.started_ms)
    if (this.ended !== null || started.length < this.shards.size) return { ok: true }
    level.start_spread_ms = round1(Math.max(...started) - Math.min(...started))
    level.ended_ms = round1(this.now())
    level.complete = true
    this.options.log(
      `coordinate: level ${level.value} ended; the shards started within ${level.start_spread_ms} ms of each other${lateWords(level)}`,
    )
    this.broadcast({ type: 'end', level: level.level, complete: true })
    this.maybeStart()
    return { ok: true }
  }

  /** POST /finish: a shard is through; the run is done when every shard is. */
  shardFinished(body: unknown): unknown {
    const state = this.stateOf(body)
    if (state !== undefined) state.finished = true
    if (this.shards.size === this.options.shards && [...this.shards.values()].every((one) => one.finished))
      this.finish()
    return { ok: true }
  }

  /** The shard's events stream: held open for its life; its close before /finish is the shard lost. */
  openEvents(url: URL, req: IncomingMessage, res: ServerResponse): void {
    const state = this.shards.get(Number(url.searchParams.get('shard')))
    if (state === undefined) {
      json(res, 404, { error: 'register first' })
      return
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' })
    res.flushHeaders()
    state.events = res
    req.socket.setNoDelay(true)
    res.on('close', () => {
      if (state.events === res) state.events = null
      this.lose(state, 'its connection closed')
    })
  }
}

function refuse(res: ServerResponse, error: string): null {
  json(res, 409, { error })
  return null
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** Bodies of this protocol are a few hundred bytes; more is not one of its messages. */
const MAX_BODY_BYTES = 64 * 1024

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > MAX_BODY_BYTES) throw new Error('body too large')
  }
  return text === '' ? null : JSON.parse(text)
}

function round1(value: number): number {
  return Math.round(value * 10) / 10
}

/** Beyond this, a shard's release is worth naming: a spread of this size is the host, not the offsets. */
const LATE_MS = 10

/** ': shard 2 released 22.2 ms after the instant (its host was busy)', or nothing when all were on time. */
function lateWords(level: CoordinatorLevel): string {
  const late = Object.entries(level.started_ms)
    .map(([shard, ms]) => ({ shard, late: round1(ms - level.start_at_ms) }))
    .filter((one) => one.late > LATE_MS)
  if (late.length === 0) return ''
  const named = late.map((one) => `shard ${one.shard} released ${one.late} ms after the instant`).join(', ')
  return `: ${named} (a busy host: its timer fired late)`
}
