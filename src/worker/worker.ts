import { parentPort } from 'node:worker_threads'
import { InterruptedError } from '../client/classify.js'
import { ConnectionWatch } from '../client/connections.js'
import { sendRequest } from '../client/stream-client.js'
import { bodyOptionsOf, closeTarget, openTarget, type Target } from '../client/target.js'
import { REAL_TIME } from '../clock.js'
import { LoopMonitor } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import { type Round, type RoundOutcome, runRound } from '../schedule/level-runner.js'
import { connectionsOf, type LevelShare } from '../schedule/level-share.js'
import type { SessionSource } from '../schedule/session-loop.js'
import type { FromWorker, TargetSpec, ToWorker } from './protocol.js'
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
let sessions: SessionSource | undefined
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

/** The level's connection pool: opened by its warm-up round and reused by the measured round, so
 * warm-up really does open the connections the measurement then uses. */
let levelPool: { level: number; target: Target } | null = null

async function runShare(share: LevelShare, round: Round, keepAlive: boolean): Promise<void> {
  const { phase } = round
  if (levelPool !== null && levelPool.level !== share.level) {
    await closeTarget(levelPool.target)
    levelPool = null
  }
  levelPool ??= {
    level: share.level,
    target: {
      ...openTarget(target as TargetSpec, Math.max(1, connectionsOf(share)), watch),
      interrupt: interrupt.signal,
    },
  }
  const connection = levelPool.target
  if (!keepAlive) watch.keepAlive = false
  watch.take() // counts start with the round
  const flusher = setInterval(flush, BATCH_INTERVAL_MS)
  if (phase === 'measure') monitor.start()
  let outcome: RoundOutcome = { arrivals: null }
  try {
    outcome = await runRound(share, round, {
      worker: workerIndex,
      nextSeq: () => seq++,
      nextPromptId,
      bodyFor: (promptId) => bodies[promptId % bodies.length] as Buffer,
      send: (request) => {
        inFlight++
        return sendRequest(connection, request)
      },
      onRecord: (record) => {
        inFlight--
        batch.push(record)
      },
      stopRequested: () => stopRequested || enough,
      clock: REAL_TIME,
      ...(sessions === undefined ? {} : { sessions }),
    })
  } finally {
    clearInterval(flusher)
    flush()
    if (phase === 'measure') {
      levelPool = null
      await closeTarget(connection)
    }
  }
  const loop =
    phase === 'measure' ? monitor.stop() : { thread: '', utilization: 0, delay_p99_ms: 0, delay_max_ms: 0 }
  outcome.connections = watch.take()
  post({ type: 'level-done', loop: { ...loop, thread: `worker-${workerIndex}` }, outcome })
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'init':
      workerIndex = message.worker
      workerCount = message.workers
      shardSlot = message.shard
      target = message.target
      watch = new ConnectionWatch(message.target.keepAlive)
      bodies = message.bodies.map((body) => Buffer.from(body.buffer, body.byteOffset, body.byteLength))
      // Session ids follow the same dealing as prompt ids: distinct across workers and shards.
      if (message.sessions !== undefined)
        sessions = threadSessions(message.sessions, bodyOptionsOf(message.target), () => nextPromptId())
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
      runShare(message.share, message.round, message.keepAlive).catch((error: unknown) =>
        post({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
      )
      break
    default:
      break
  }
})
