import type { Endpoint } from '../client/endpoint.js'
import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import type { ClosedLoad, MeasureWindow, OpenLoad, RoundOutcome } from '../schedule/level-runner.js'

/**
 * Everything a worker needs to build its own connection pool to the target: the run's resolved
 * endpoint (Authorization included: it travels between threads in memory only, never logged); sent once.
 */
export type TargetSpec = Endpoint

/** A worker's share of one level. */
export interface LevelShare {
  level: number
  /** Connections of the level's pool: the most requests this worker has in flight in the level. */
  connections: number
  /** Warm-up requests (closed loop, excluded from the figures) and how many run at once. */
  warmup: { requests: number; concurrency: number }
  /** The measured round. Its absolute times are on the shared performance.now() clock (threads share timeOrigin). */
  measure: ClosedLoad | OpenLoad
  window: MeasureWindow
  retry: number
  /** False once any thread saw the server close after responses: no thread reuses connections then. */
  keepAlive: boolean
}

export type ToWorker =
  | {
      type: 'init'
      worker: number
      workers: number
      /** Sharded runs: prompt ids are shard + shards × (this worker's own sequence), distinct across shards. */
      shard: { index: number; count: number }
      target: TargetSpec
      bodies: Uint8Array[]
    }
  | { type: 'round'; phase: 'warmup' | 'measure'; share: LevelShare }
  | { type: 'stop'; graceMs: number }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'records'; records: RequestRecord[] }
  | { type: 'level-done'; loop: LoopStats; outcome: RoundOutcome }
  | { type: 'failed'; message: string }
