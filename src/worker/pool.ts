import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import { dealArrivals } from '../schedule/arrivals.js'
import type { ClosedLoad, MeasureWindow, RoundOutcome } from '../schedule/level-runner.js'
import { splitEvenly, splitProportionally } from '../schedule/split.js'
import type { FromWorker, LevelShare, TargetSpec, ToWorker } from './protocol.js'

interface RoundDone {
  loop: LoopStats
  outcome: RoundOutcome
}

/** One level as the pool runs it: spread over the workers, warm-up first, then the measured round. */
export interface LevelRun {
  /** The level's value: streams (concurrency mode) or requests per second (rate mode). */
  level: number
  warmup: number
  retry: number
  /** Timed levels: seconds before and after the measured window whose requests are excluded. */
  window: { warmup_s: number; duration_s: number; cooldown_s: number } | null
  load:
    | { kind: 'closed'; concurrency: number; requests: number | null }
    | { kind: 'open'; offsets: Float64Array; maxInFlight: number; dropAfterMs: number }
}

/** Open-loop levels start this long after the schedule is posted, so every worker has it in time. */
const OPEN_START_DELAY_MS = 50
/** Open-loop warm-up requests run this many at a time. */
const OPEN_WARMUP_CONCURRENCY = 4

/**
 * Compiled, the worker is worker.js beside this file. Run from source under tsx (tests, benches),
 * it is worker.ts, and Node 20 resolves a worker's entry before any --import hook runs, so a tiny
 * bootstrap registers tsx in the thread first and then imports it.
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

function spawnWorker(): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL)
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`
  return new Worker(bootstrap, { eval: true })
}

/**
 * Worker threads that generate the load: each has its own event loop and connection pool, so one
 * busy loop cannot delay the arrival stamps of every stream. Records come back in batches.
 */
export class WorkerPool {
  private onRecords: (records: RequestRecord[]) => void = () => {}
  /** Turned off for every later level once any thread saw the server close after responses. */
  private keepAlive = true
  private waiting = new Map<number, { resolve: (done: RoundDone) => void; reject: (error: Error) => void }>()

  private constructor(private readonly workers: Worker[]) {
    workers.forEach((worker, index) => {
      worker.on('message', (message: FromWorker) => this.receive(index, message))
      worker.on('error', (error) => this.fail(index, error))
      worker.on('exit', (code) => this.fail(index, new Error(`worker ${index} exited with code ${code}`)))
    })
  }

  static async start(
    count: number,
    target: TargetSpec,
    bodies: Buffer[],
    shard: { index: number; count: number } = { index: 0, count: 1 },
  ): Promise<WorkerPool> {
    const workers = Array.from({ length: count }, spawnWorker)
    const ready = workers.map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          const onMessage = (message: FromWorker): void => {
            if (message.type !== 'ready') return
            worker.off('message', onMessage)
            resolve()
          }
          worker.on('message', onMessage)
          worker.once('error', reject)
        }),
    )
    workers.forEach((worker, index) => {
      const init: ToWorker = { type: 'init', worker: index, workers: count, shard, target, bodies }
      worker.postMessage(init)
    })
    await Promise.all(ready)
    return new WorkerPool(workers)
  }

  get size(): number {
    return this.workers.length
  }

  /**
   * Runs one level; `onRecords` receives every record (warm-up included) as batches arrive, and
   * `onMeasureStart` is called when warm-up is over and the measured round begins.
   */
  async runLevel(
    level: LevelRun,
    onRecords: (records: RequestRecord[]) => void,
    onMeasureStart: () => void = () => {},
  ): Promise<{ loops: LoopStats[]; outcomes: RoundOutcome[] }> {
    this.onRecords = onRecords
    const { load } = level
    const used =
      load.kind === 'closed' ? Math.min(this.workers.length, load.concurrency) : this.workers.length
    // Closed: the level's streams split evenly. Open: the schedule dealt round-robin, and the
    // in-flight bound split like streams.
    const streams =
      load.kind === 'closed'
        ? splitEvenly(load.concurrency, used)
        : splitEvenly(Math.max(used, load.maxInFlight), used)
    const warmups = splitProportionally(level.warmup, streams)
    const requests =
      load.kind === 'closed' && load.requests !== null ? splitProportionally(load.requests, streams) : null
    const dealt = load.kind === 'open' ? dealArrivals(load.offsets, used) : null
    const warmupConcurrency = (i: number): number =>
      Math.min(
        load.kind === 'closed' ? (streams[i] as number) : OPEN_WARMUP_CONCURRENCY,
        warmups[i] as number,
      )
    const share = (i: number, measure: LevelShare['measure'], window: MeasureWindow): LevelShare => ({
      level: level.level,
      connections: streams[i] as number,
      warmup: { requests: warmups[i] as number, concurrency: warmupConcurrency(i) },
      measure,
      window,
      retry: level.retry,
      keepAlive: this.keepAlive,
    })
    const open: MeasureWindow = { from: null, until: null }
    if (level.warmup > 0) {
      const idle: ClosedLoad = { kind: 'closed', concurrency: 0, requests: 0, deadline: null }
      await this.round('warmup', used, (i) => share(i, idle, open))
    }
    // Times are set after warm-up, on the clock every thread shares (one timeOrigin per process).
    onMeasureStart()
    const now = performance.now()
    const startAt = load.kind === 'open' ? now + OPEN_START_DELAY_MS : now
    const window: MeasureWindow =
      level.window === null
        ? open
        : {
            from: startAt + level.window.warmup_s * 1000,
            until: startAt + (level.window.warmup_s + level.window.duration_s) * 1000,
          }
    const deadline =
      level.window === null
        ? null
        : startAt + (level.window.warmup_s + level.window.duration_s + level.window.cooldown_s) * 1000
    const results = await this.round('measure', used, (i) =>
      share(
        i,
        load.kind === 'closed'
          ? { kind: 'closed', concurrency: streams[i] as number, requests: requests?.[i] ?? null, deadline }
          : {
              kind: 'open',
              offsets: (dealt as Float64Array[])[i] as Float64Array,
              startAt,
              maxInFlight: streams[i] as number,
              dropAfterMs: load.dropAfterMs,
            },
        window,
      ),
    )
    return { loops: results.map((r) => r.loop), outcomes: results.map((r) => r.outcome) }
  }

  /** No thread reuses connections from the next level on. */
  stopReuse(): void {
    this.keepAlive = false
  }

  /** First Ctrl-C: no new requests anywhere; in-flight ones get `graceMs` to finish, then are cut. */
  stop(graceMs: number): void {
    for (const worker of this.workers) worker.postMessage({ type: 'stop', graceMs } satisfies ToWorker)
  }

  async close(): Promise<void> {
    this.waiting.clear()
    await Promise.all(
      this.workers.map((worker) => {
        worker.removeAllListeners('exit')
        return worker.terminate()
      }),
    )
  }

  private round(
    phase: 'warmup' | 'measure',
    used: number,
    shareOf: (i: number) => LevelShare,
  ): Promise<RoundDone[]> {
    const done: Promise<RoundDone>[] = []
    for (let i = 0; i < used; i++) {
      done.push(new Promise((resolve, reject) => this.waiting.set(i, { resolve, reject })))
      ;(this.workers[i] as Worker).postMessage({ type: 'round', phase, share: shareOf(i) } satisfies ToWorker)
    }
    return Promise.all(done)
  }

  private receive(index: number, message: FromWorker): void {
    if (message.type === 'records') this.onRecords(message.records)
    else if (message.type === 'level-done')
      this.settle(index)?.resolve({ loop: message.loop, outcome: message.outcome })
    else if (message.type === 'failed')
      this.settle(index)?.reject(new Error(`worker ${index}: ${message.message}`))
  }

  private fail(index: number, error: Error): void {
    this.settle(index)?.reject(error)
  }

  private settle(index: number) {
    const waiter = this.waiting.get(index)
    this.waiting.delete(index)
    return waiter
  }
}
