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
  const shards = new Map<number, ShardState>()
  const levels: CoordinatorLevel[] = []
  let digest: string | null = null
  let ended: Incomplete | null = null
  let settle: (report: CoordinationReport) => void = () => {}
  const done = new Promise<CoordinationReport>((resolve) => {
    settle = resolve
  })
  let settled = false

  const report = (): CoordinationReport => ({
    shards: [...shards.values()]
      .map((state) => {
        const { shard, host, offset_ms, bound_ms, rtt_ms } = state.register
        return { shard, host, offset_ms, bound_ms, rtt_ms, lost: state.lost }
      })
      .sort((a, b) => a.shard - b.shard),
    levels,
    incomplete: ended,
  })
  const finish = (): void => {
    if (settled) return
    settled = true
    settle(report())
  }
  const send = (state: ShardState, event: Event): void => {
    state.events?.write(`${JSON.stringify(event)}\n`)
  }
  const broadcast = (event: Event): void => {
    for (const state of shards.values()) if (state.lost === null && !state.finished) send(state, event)
  }
  const current = (): CoordinatorLevel | undefined => {
    const level = levels.at(-1)
    return level !== undefined && level.ended_ms === null ? level : undefined
  }

  /** Ends the run: the level in progress (if any) is incomplete, the others are told to stop. */
  const abort = (incomplete: Incomplete): void => {
    if (ended !== null || settled) return
    ended = incomplete
    const level = current()
    if (level !== undefined) {
      level.ended_ms = incomplete.at_ms
      level.complete = false
      level.incomplete = incomplete
    }
    const where = level === undefined ? 'between levels' : `during level ${level.value}`
    options.log(
      `coordinate: ${incomplete.reason} ${where} at ${new Date(incomplete.at_ms).toISOString()}; the run is ended`,
    )
    broadcast({ type: 'abort', level: level?.level ?? null, incomplete })
    finish()
  }
  const lose = (state: ShardState, reason: string): void => {
    if (state.lost !== null || state.finished || ended !== null) return
    const shard = state.register.shard
    state.lost = { shard, at_ms: round1(now()), reason: `shard ${shard} lost (${reason})` }
    abort(state.lost)
  }

  /** All registered and ready for the same next level: start it at one instant. */
  const maybeStart = (): void => {
    if (ended !== null || current() !== undefined || shards.size < options.shards) return
    const states = [...shards.values()]
    const next = levels.length
    if (!states.every((state) => state.ready?.level === next)) return
    const values = new Set(states.map((state) => state.ready?.value))
    if (values.size > 1) {
      abort({
        shard: null,
        at_ms: round1(now()),
        reason: `the shards asked for different levels at position ${next + 1}: ${[...values].join(', ')}`,
      })
      return
    }
    // Long enough for the start to reach the farthest shard (a few of its round trips) before it is due.
    const lead = Math.max(MIN_LEAD_MS, ...states.map((state) => 4 * state.register.rtt_ms))
    const level: CoordinatorLevel = {
      level: next,
      value: states[0]?.ready?.value as number,
      start_at_ms: round1(now() + lead),
      started_ms: {},
      start_spread_ms: null,
      ended_ms: null,
      complete: false,
      incomplete: null,
    }
    levels.push(level)
    for (const state of states) state.ready = null
    broadcast({ type: 'start', level: level.level, value: level.value, at_ms: level.start_at_ms })
  }

  const handlers: Record<string, (body: unknown, url: URL, res: ServerResponse) => unknown> = {
    'POST /register': (body, _url, res) => {
      const register = body as Register
      const problem = registerProblem(register)
      const refusal =
        problem ??
        (shards.has(register.shard)
          ? `shard ${register.shard} is registered already`
          : digest !== null && register.config_digest !== digest
            ? `shard ${register.shard} belongs to another run (config digest ${register.config_digest}, the others' ${digest})`
            : null)
      if (refusal !== null) {
        // Said here too: the run waits for a shard that was turned away.
        options.log(`coordinate: refused a registration: ${refusal}`)
        return refuse(res, refusal)
      }
      digest = register.config_digest
      shards.set(register.shard, {
        register,
        events: null,
        lastSeen: now(),
        ready: null,
        finished: false,
        lost: null,
      })
      options.log(
        `coordinate: shard ${register.shard}/${register.count} on ${register.host}: clock offset ${register.offset_ms} ms ± ${register.bound_ms} ms (${shards.size} of ${options.shards} registered)`,
      )
      return { ok: true }
    },
    'POST /heartbeat': (body) => {
      const state = stateOf(body)
      if (state !== undefined) state.lastSeen = now()
      return { ok: true }
    },
    'POST /ready': (body, _url, res) => {
      const ready = body as Ready
      const state = stateOf(body)
      if (state === undefined) return refuse(res, 'not registered')
      state.lastSeen = now()
      state.ready = ready
      maybeStart()
      return { ok: true }
    },
    'POST /done': (body, _url, res) => {
      const report = body as Done
      const state = stateOf(body)
      const level = current()
      if (state === undefined) return refuse(res, 'not registered')
      if (level === undefined || level.level !== report.level) return { ok: true }
      level.started_ms[String(report.shard)] = round1(report.started_ms)
      if (report.interrupted)
        abort({
          shard: report.shard,
          at_ms: round1(now()),
          reason: `shard ${report.shard} stopped its level`,
        })
      const started = Object.values(level.started_ms)
      if (ended !== null || started.length < shards.size) return { ok: true }
      level.start_spread_ms = round1(Math.max(...started) - Math.min(...started))
      level.ended_ms = round1(now())
      level.complete = true
      options.log(
        `coordinate: level ${level.value} ended; the shards started within ${level.start_spread_ms} ms of each other${lateWords(level)}`,
      )
      broadcast({ type: 'end', level: level.level, complete: true })
      maybeStart()
      return { ok: true }
    },
    'POST /finish': (body) => {
      const state = stateOf(body)
      if (state !== undefined) state.finished = true
      if (shards.size === options.shards && [...shards.values()].every((one) => one.finished)) finish()
      return { ok: true }
    },
  }
  const stateOf = (body: unknown): ShardState | undefined =>
    shards.get((body as { shard?: unknown } | null)?.shard as number)

  const server = createServer((req, res) => {
    const received = now()
    const url = new URL(req.url ?? '/', 'http://coordinator')
    const route = `${req.method} ${url.pathname}`
    if (route === 'GET /time') return json(res, 200, { received_ms: received, sent_ms: now() })
    if (route === 'GET /events') return openEvents(url, req, res)
    if (route === 'GET /status') return json(res, 200, report())
    const handler = handlers[route]
    if (handler === undefined) return json(res, 404, { error: `no ${route}` })
    readJson(req)
      .then((body) => {
        const answer = handler(body, url, res)
        if (!res.headersSent) json(res, 200, answer)
      })
      .catch((error: unknown) => json(res, 400, { error: String(error) }))
  })

  /** The shard's events stream: held open for its life; its close before /finish is the shard lost. */
  function openEvents(url: URL, req: IncomingMessage, res: ServerResponse): void {
    const state = shards.get(Number(url.searchParams.get('shard')))
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
      lose(state, 'its connection closed')
    })
  }

  const watchdog = setInterval(() => {
    for (const state of shards.values())
      if (now() - state.lastSeen > deadAfter) lose(state, `no heartbeat for ${deadAfter} ms`)
  }, 100)
  watchdog.unref()
  void done.then(() => clearInterval(watchdog))

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    done,
    async close() {
      clearInterval(watchdog)
      for (const state of shards.values()) state.events?.end()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  function registerProblem(register: Register): string | null {
    if (!Number.isInteger(register?.shard) || register.shard < 0 || register.shard >= options.shards)
      return `shard must be an index 0..${options.shards - 1}`
    if (register.count !== options.shards)
      return `the run is split ${register.count} ways; this coordinator was started for ${options.shards} shards`
    if (![register.offset_ms, register.bound_ms, register.rtt_ms].every(Number.isFinite))
      return 'offset_ms, bound_ms and rtt_ms must be numbers'
    if (ended !== null) return 'the run has ended'
    return null
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
