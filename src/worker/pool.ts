import { isAbsolute, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import type { Round, RoundOutcome } from '../schedule/level-runner.js'
import { connectionsOf, type LevelShare, shareOf } from '../schedule/level-share.js'
import { sharesByTarget, type TargetWeights } from '../schedule/target-share.js'
import type { FromWorker, JobWork, SessionWork, SplitTarget, TargetSpec, ToWorker } from './protocol.js'

interface RoundDone {
  loop: LoopStats
  outcome: RoundOutcome
}

/** Open-loop levels start this long after the schedule is posted, so every worker has it in time. */
const OPEN_START_DELAY_MS = 50

/**
 * Compiled, the worker is worker.js beside this file. Run from source (tests, benches), it is
 * worker.ts, and Node 20 neither resolves a worker's entry through the process's loader hooks nor
 * runs its --import modules in the thread; so a tiny bootstrap imports in the thread the modules the
 * process was started with `--import` (the suite's prebuilt hooks serve what was transpiled ahead
 * of time), or registers tsx where the process ran tsx or nothing, then imports the worker. (With
 * tsx in every thread, each run of the suite transformed the worker's modules again: 0.8 of
 * run-images.test.ts's 4.7 CPU-s, two runs of one thread each.)
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

/** tsx's own entry, by name (`--import tsx`) or by path (the `tsx` command's --import of its loader). */
function isTsx(specifier: string): boolean {
  return specifier === 'tsx' || specifier.startsWith('tsx/') || specifier.includes('/node_modules/tsx/')
}

/** The process's `--import` modules, as a thread can import them: paths as file URLs, names as given. */
export function startupImports(execArgv: readonly string[], cwd: string): string[] {
  const specifiers: string[] = []
  execArgv.forEach((arg, i) => {
    const specifier =
      arg === '--import' ? execArgv[i + 1] : arg.startsWith('--import=') ? arg.slice(9) : undefined
    if (specifier === undefined) return
    const isPath = specifier.startsWith('.') || isAbsolute(specifier)
    specifiers.push(isPath ? pathToFileURL(resolve(cwd, specifier)).href : specifier)
  })
  return specifiers
}

/**
 * A thread's young generation is capped (V8 grows it to 32 MB under this load): a thread's live
 * objects are its in-flight requests, and all the space its garbage may fill before a scavenge
 * becomes resident memory. 6 MB cut the peak RSS of a 64-stream run by 10-15 MB without measurable CPU.
 */
const THREAD_LIMITS = { resourceLimits: { maxYoungGenerationSizeMb: 6 } }

function spawnWorker(): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL, THREAD_LIMITS)
  const imports = startupImports(process.execArgv, process.cwd())
  const others = imports.filter((specifier) => !isTsx(specifier))
  // Importing `tsx` in a thread registers nothing (its API does); where the process has loaders of
  // its own and not tsx, they serve the thread (registering tsx there too cost about 0.25 CPU-s a thread).
  const tsx = others.length === 0 || others.length < imports.length
  const bootstrap =
    `(async () => { ${tsx ? `(await import('tsx/esm/api')).register(); ` : ''}` +
    `for (const specifier of ${JSON.stringify(others)}) await import(specifier); ` +
    `await import(${JSON.stringify(WORKER_URL.href)}) })()`
  return new Worker(bootstrap, { eval: true, ...THREAD_LIMITS })
}

/**
 * Worker threads that generate the load: each has its own event loop and connection pool, so one
 * busy loop cannot delay the arrival stamps of every stream. Records come back in batches.
 */
export class WorkerPool {
  private onRecords: (records: RequestRecord[]) => void = () => {}
  /** The round last sent to the threads (an `enough` names it). */
  private roundId = 0
  /** Each thread's requests in flight as of its last batch (the live metrics read the sum). */
  private readonly inFlightByThread: number[] = []
  /** Turned off for every later level once any thread saw the server close after responses. */
  private keepAlive = true
  private waiting = new Map<number, { resolve: (done: RoundDone) => void; reject: (error: Error) => void }>()

  private constructor(
    private readonly workers: Worker[],
    /** Several targets: how a level is split between them; null = one endpoint, one model. */
    private readonly split: TargetWeights | null,
  ) {
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
    /** --sessions or --jobs: the conversations the threads build turn by turn. */
    sessions?: SessionWork | JobWork,
    /** Several endpoints or models: the targets, each model's bodies, and how levels are split. */
    split?: { targets: SplitTarget[]; modelBodies: Buffer[][]; weights: TargetWeights },
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
      if (sessions !== undefined) {
        if ('jobs' in sessions) init.jobs = sessions
        else init.sessions = sessions
      }
      if (split !== undefined) init.split = { targets: split.targets, modelBodies: split.modelBodies }
      worker.postMessage(init)
    })
    await Promise.all(ready)
    return new WorkerPool(workers, split?.weights ?? null)
  }

  get size(): number {
    return this.workers.length
  }

  /**
   * Runs one level; `onRecords` receives every record (warm-up included) as batches arrive, and
   * `onMeasureStart` is called when warm-up is over and the measured round begins.
   */
  async runLevel(
    level: LevelShare,
    onRecords: (records: RequestRecord[]) => void,
    onMeasureStart: () => void = () => {},
  ): Promise<{ loops: LoopStats[]; outcomes: RoundOutcome[] }> {
    this.onRecords = onRecords
    const count = this.workers.length
    // Each thread runs its share of this process's share. Threads left without a connection (fewer
    // streams than threads) sit the level out; remainders go first, so they are the last threads.
    // Several targets: each target's share of the level is dealt over the threads on its own.
    const byTarget = this.split === null ? [level] : sharesByTarget(level, this.split)
    const shares = Array.from({ length: count }, (_, i) =>
      // Target t's parts start at thread t, so a level of one stream per target spreads over the threads.
      byTarget.map((share, t) => shareOf(share, (i - t + count * byTarget.length) % count, count)),
    ).filter((parts) => parts.some((share) => connectionsOf(share) > 0))
    if (level.warmup > 0) await this.round(shares, { phase: 'warmup' })
    // The start is set after warm-up, on the clock every thread shares (one timeOrigin per process).
    onMeasureStart()
    const now = performance.now()
    const startAt = level.load.kind === 'open' ? now + OPEN_START_DELAY_MS : now
    const results = await this.round(shares, { phase: 'measure', startAt })
    return { loops: results.map((r) => r.loop), outcomes: results.map((r) => r.outcome) }
  }

  /** No thread reuses connections from the next level on. */
  stopReuse(): void {
    this.keepAlive = false
  }

  /**
   * --precision: the round in progress sends no new requests; those in flight finish as usual (the
   * level is over, not cut). Ignored by a thread whose round already ended.
   */
  enough(): void {
    for (const worker of this.workers)
      worker.postMessage({ type: 'enough', roundId: this.roundId } satisfies ToWorker)
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

  /** Requests sent and not yet recorded, over every thread, as of their last batches. */
  get inFlight(): number {
    let sum = 0
    for (const count of this.inFlightByThread) sum += count ?? 0
    return sum
  }

  private round(shares: readonly LevelShare[][], round: Round): Promise<RoundDone[]> {
    this.roundId++
    return Promise.all(
      shares.map((share, i) => {
        const done = new Promise<RoundDone>((resolve, reject) => this.waiting.set(i, { resolve, reject }))
        const message: ToWorker = {
          type: 'round',
          round,
          shares: share,
          keepAlive: this.keepAlive,
          roundId: this.roundId,
        }
        ;(this.workers[i] as Worker).postMessage(message)
        return done
      }),
    )
  }

  private receive(index: number, message: FromWorker): void {
    if (message.type === 'records') {
      this.inFlightByThread[index] = message.in_flight
      if (message.records.length > 0) this.onRecords(message.records)
    } else if (message.type === 'level-done')
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
