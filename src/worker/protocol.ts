import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'
import type { Round, RoundOutcome } from '../schedule/level-runner.js'
import type { LevelShare } from '../schedule/level-share.js'

/** Everything a worker needs to build its own connection pool to the target; sent once. */
export interface TargetSpec {
  origin: string
  path: string
  /** Authorization included: travels between threads in memory only, never logged. */
  headers: Record<string, string>
  stream: boolean
  /** Whole request. */
  timeoutMs: number
  connectTimeoutMs: number
  /** Send to first token; null = only the whole-request timeout. */
  firstTokenTimeoutMs: number | null
  /** Longest silence between two reads of the response. */
  idleTimeoutMs: number
  secrets: string[]
  /**
   * Reuse connections. False when the user said --no-keepalive or the probes before the run saw
   * the server close connections right after responses.
   */
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
  | {
      type: 'round'
      round: Round
      /** This thread's share of the level. */
      share: LevelShare
      /** False once any thread saw the server close after responses: no thread reuses connections then. */
      keepAlive: boolean
    }
  | { type: 'stop'; graceMs: number }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'records'; records: RequestRecord[] }
  | { type: 'level-done'; loop: LoopStats; outcome: RoundOutcome }
  | { type: 'failed'; message: string }
