import { parentPort } from 'node:worker_threads'
import { InterruptedError } from '../client/classify.js'
import { ConnectionWatch } from '../client/connections.js'
import { sendRequest } from '../client/stream-client.js'
import { bodyOptionsOf, closeTarget, openTarget, type Target } from '../client/target.js'
import { REAL_TIME } from '../clock.js'
import { LoopMonitor } from '../metrics/client-health.js'
import type { RequestRecord, RequestTarget } from '../records/types.js'
import type { JobSource } from '../schedule/job-loop.js'
import { type Round, type RoundOutcome, runRound } from '../schedule/level-runner.js'
import { connectionsOf, type LevelShare } from '../schedule/level-share.js'
import type { SessionSource } from '../schedule/session-loop.js'
import { parallelTurns } from '../workload/jobs.js'
import type { BodyOptions } from '../workload/request-body.js'
import { threadJobs } from './job-source.js'
import type { FromWorker, SplitTarget, TargetSpec, ToWorker } from './protocol.js'
import { threadSessions } from './session-source.js'

/**
 * A load-generating thread: its own event loop and its own connection pool per level. It stamps,
 * records and batches; the main thread writes the records and computes every figure.
 */

/** Records reach the main thread in batches, at most this long after they finish. */
const BATCH_INTERVAL_MS = 50

const port = parentPort
if (port === null) throw new Error('worker.ts must run in a worker thread')

let workerIndex = 0
let workerCount = 1
let shardSlot = { index: 0, count: 1 }
let target: TargetSpec | null = null
let bodies: Buffer[] = []
/** Several endpoints or models: the targets and each model's bodies; null with one of each. */
let split: { targets: SplitTarget[]; modelBodies: Buffer[][] } | null = null
let sessions: SessionSource | undefined
let jobs: JobSource | undefined
/** Connections per stream: a job's parallel turns each need their own (1 without jobs). */
let connectionsPerStream = 1
let seq = 0
let promptRound = 0
let stopRequested = false
/** The round running on this thread, and whether --precision has said it has enough. */
let roundId = 0
let enough = false
const interrupt = new AbortController()
let batch: RequestRecord[] = []
/** Sent and not yet recorded: one increment and one decrement per request, posted with the batches. */
let inFlight = 0
let postedInFlight = 0
/** This thread's keep-alive policy: once the server is seen closing after responses, for good. */
let watch = new ConnectionWatch(true)
const monitor = new LoopMonitor('worker')

/** A body as it arrived from the main thread (a Uint8Array over the transferred bytes), without a copy. */
function asBuffer(body: Uint8Array): Buffer {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
}

function post(message: FromWorker): void {
  ;(port as NonNullable<typeof port>).postMessage(message)
}

function flush(): void {
  // A change of the in-flight count alone is posted too: a level's first TTFT can be long.
  if (batch.length === 0 && inFlight === postedInFlight) return
  post({ type: 'records', records: batch, in_flight: inFlight })
  postedInFlight = inFlight
  batch = []
}

// Worker w of W in shard s of S takes prompts s + S(w + W k), k = 0, 1, ...: distinct across workers
// and shards.
function nextPromptId(): number {
  return shardSlot.index + shardSlot.count * (workerIndex + workerCount * promptRound++)
}

/**
 * The level's connection pools, one per target (null for a target this thread sends nothing to):
 * opened by its warm-up round and reused by the measured round, so warm-up really does open the
 * connections the measurement then uses.
 */
let levelPools: { level: number; pools: (Target | null)[] } | null = null

async function closePools(pools: readonly (Target | null)[]): Promise<void> {
  await Promise.all(pools.map((pool) => (pool === null ? undefined : closeTarget(pool))))
}

/** Target t's endpoint: the run's own in a run of one target. */
function specOf(t: number): TargetSpec {
  return split === null ? (target as TargetSpec) : (split.targets[t] as SplitTarget).endpoint
}

/** Target t's bodies, and what its records carry to say where they went (nothing with one target). */
function routeOf(t: number): { bodies: Buffer[]; stamp: RequestTarget | null } {
  if (split === null) return { bodies, stamp: null }
  const chosen = split.targets[t] as SplitTarget
  return {
    bodies: split.modelBodies[chosen.model_index] as Buffer[],
    stamp: { endpoint: chosen.endpoint_index, model: chosen.model_index },
  }
}

async function runShares(shares: readonly LevelShare[], round: Round, keepAlive: boolean): Promise<void> {
  const { phase } = round
  const level = (shares[0] as LevelShare).level
  if (levelPools !== null && levelPools.level !== level) {
    await closePools(levelPools.pools)
    levelPools = null
  }
  levelPools ??= {
    level,
    pools: shares.map((share, t) =>
      connectionsOf(share) > 0
        ? {
            ...openTarget(specOf(t), connectionsOf(share) * connectionsPerStream, watch),
            interrupt: interrupt.signal,
          }
        : null,
    ),
  }
  const { pools } = levelPools
  if (!keepAlive) watch.keepAlive = false
  watch.take() // counts start with the round
  const flusher = setInterval(flush, BATCH_INTERVAL_MS)
  if (phase === 'measure') monitor.start()
  let outcomes: RoundOutcome[] = []
  try {
    outcomes = await Promise.all(
      shares.map((share, t) => {
        const connection = pools[t] ?? null
        if (connection === null) return { arrivals: null }
        const route = routeOf(t)
        return runRound(share, round, {
          worker: workerIndex,
          nextSeq: () => seq++,
          nextPromptId,
          bodyFor: (promptId) => route.bodies[promptId % route.bodies.length] as Buffer,
          send: (request) => {
            inFlight++
            return sendRequest(connection, request)
          },
          onRecord: (record) => {
            inFlight--
            if (route.stamp !== null) record.target = route.stamp
            batch.push(record)
          },
          stopRequested: () => stopRequested || enough,
          clock: REAL_TIME,
          ...(sessions === undefined ? {} : { sessions }),
          ...(jobs === undefined ? {} : { jobs }),
        })
      }),
    )
  } finally {
    clearInterval(flusher)
    flush()
    if (phase === 'measure') {
      levelPools = null
      await closePools(pools)
    }
  }
  const loop =
    phase === 'measure' ? monitor.stop() : { thread: '', utilization: 0, delay_p99_ms: 0, delay_max_ms: 0 }
  const outcome: RoundOutcome = { arrivals: sumArrivals(outcomes) }
  outcome.connections = watch.take()
  post({ type: 'level-done', loop: { ...loop, thread: `worker-${workerIndex}` }, outcome })
}

/** The open loop's arrivals over a thread's targets; null for a closed loop. */
/** The options of the bodies a thread builds turn by turn: the target's, with the functions offered (--tools). */
function turnBodyOptions(message: Extract<ToWorker, { type: 'init' }>): BodyOptions {
  const structured = (message.sessions ?? message.jobs)?.structured
  const options = bodyOptionsOf(message.target)
  return structured === undefined ? options : { ...options, structured }
}

function sumArrivals(outcomes: readonly RoundOutcome[]): RoundOutcome['arrivals'] {
  const open = outcomes.flatMap(({ arrivals }) => (arrivals === null ? [] : [arrivals]))
  if (open.length === 0) return null
  return {
    planned: open.reduce((total, a) => total + a.planned, 0),
    sent: open.reduce((total, a) => total + a.sent, 0),
    dropped: open.reduce((total, a) => total + a.dropped, 0),
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'init':
      workerIndex = message.worker
      workerCount = message.workers
      shardSlot = message.shard
      target = message.target
      watch = new ConnectionWatch(message.target.keepAlive)
      bodies = message.bodies.map(asBuffer)
      split =
        message.split === undefined
          ? null
          : {
              targets: message.split.targets,
              modelBodies: message.split.modelBodies.map((list) => list.map(asBuffer)),
            }
      // Session ids follow the same dealing as prompt ids: distinct across workers and shards.
      if (message.sessions !== undefined)
        sessions = threadSessions(message.sessions, turnBodyOptions(message), () => nextPromptId())
      if (message.jobs !== undefined) {
        jobs = threadJobs(message.jobs, turnBodyOptions(message), () => nextPromptId())
        connectionsPerStream = parallelTurns(message.jobs.jobs)
      }
      post({ type: 'ready' })
      break
    case 'stop':
      stopRequested = true
      // In-flight requests get a short grace to finish, then are cut (and recorded as interrupted).
      setTimeout(() => interrupt.abort(new InterruptedError(message.graceMs)), message.graceMs).unref()
      break
    case 'enough':
      if (message.roundId === roundId) enough = true
      break
    case 'round':
      roundId = message.roundId
      enough = false
      runShares(message.shares, message.round, message.keepAlive).catch((error: unknown) =>
        post({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
      )
      break
    default:
      break
  }
})
