import type { LoopStats } from '../metrics/client-health.js'
import type { RequestRecord } from '../records/types.js'

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
}

/** A worker's share of one level. */
export interface LevelShare {
  level: number
  /** Streams this worker keeps in flight in this round (warm-up may use fewer). */
  concurrency: number
  /** Connections of the level's pool: the worker's full share of the level's streams. */
  connections: number
  warmup: number
  requests: number | null
  /** Absolute deadline on the shared performance.now() clock (threads share timeOrigin), or null. */
  deadline: number | null
  retry: number
}

export type ToWorker =
  | { type: 'init'; worker: number; workers: number; target: TargetSpec; bodies: Uint8Array[] }
  | { type: 'round'; phase: 'warmup' | 'measure'; share: LevelShare }
  | { type: 'stop'; graceMs: number }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'records'; records: RequestRecord[] }
  | { type: 'level-done'; loop: LoopStats }
  | { type: 'failed'; message: string }
