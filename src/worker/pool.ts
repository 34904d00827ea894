import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import { splitEvenly, splitProportionally } from '../schedule/split.js'
import type { FromWorker, LevelShare, TargetSpec, ToWorker } from './protocol.js'

/** One level as the pool runs it: spread over the workers, warm-up first, then the measured round. */
export interface LevelRun {
  concurrency: number
  warmup: number
  requests: number | null
  duration_s: number | null
  retry: number
}

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
  private waiting = new Map<number, { resolve: (loop: LoopStats) => void; reject: (error: Error) => void }>()

  private constructor(private readonly workers: Worker[]) {
    workers.forEach((worker, index) => {
      worker.on('message', (message: FromWorker) => this.receive(index, message))
      worker.on('error', (error) => this.fail(index, error))
      worker.on('exit', (code) => this.fail(index, new Error(`worker ${index} exited with code ${code}`)))
    })
  }

  static async start(count: number, target: TargetSpec, bodies: Buffer[]): Promise<WorkerPool> {
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
      const init: ToWorker = { type: 'init', worker: index, workers: count, target, bodies }
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
  ): Promise<LoopStats[]> {
    this.onRecords = onRecords
    const used = Math.min(this.workers.length, level.concurrency)
    const streams = splitEvenly(level.concurrency, used)
    const warmups = splitProportionally(level.warmup, streams)
    const requests = level.requests === null ? null : splitProportionally(level.requests, streams)
    const share = (i: number, deadline: number | null): LevelShare => ({
      level: level.concurrency,
      concurrency: streams[i] as number,
      connections: streams[i] as number,
      warmup: warmups[i] as number,
      requests: requests === null ? null : (requests[i] as number),
      deadline,
      retry: level.retry,
    })
    if (level.warmup > 0) {
      await this.round('warmup', used, (i) => ({
        ...share(i, null),
        concurrency: Math.min(streams[i] as number, warmups[i] as number),
      }))
    }
    // The deadline is set after warm-up, on the clock every thread shares (one timeOrigin per process).
    onMeasureStart()
    const deadline = level.duration_s === null ? null : performance.now() + level.duration_s * 1000
    return this.round('measure', used, (i) => share(i, deadline))
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
  ): Promise<LoopStats[]> {
    const done: Promise<LoopStats>[] = []
    for (let i = 0; i < used; i++) {
      done.push(new Promise((resolve, reject) => this.waiting.set(i, { resolve, reject })))
      ;(this.workers[i] as Worker).postMessage({ type: 'round', phase, share: shareOf(i) } satisfies ToWorker)
    }
    return Promise.all(done)
  }

  private receive(index: number, message: FromWorker): void {
    if (message.type === 'records') this.onRecords(message.records)
    else if (message.type === 'level-done') this.settle(index)?.resolve(message.loop)
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
