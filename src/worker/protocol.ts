import type { Endpoint } from '../client/target.js'
import type { LoopStats } from '../metrics/client-health.js'
import type { StructuredOutput } from '../protocols/structured-parts.js'
import type { RequestRecord } from '../records/types.js'
import type { Round, RoundOutcome } from '../schedule/level-runner.js'
import type { LevelShare } from '../schedule/level-share.js'
import type { JobSpec } from '../workload/jobs.js'
import type { SessionSpec } from '../workload/sessions.js'

/**
 * Everything a worker needs to build its own connection pool to the target: the run's resolved
 * endpoint (Authorization included: it travels between threads in memory only, never logged); sent once.
 */
export type TargetSpec = Endpoint

/**
 * Several endpoints or models in one run: each (endpoint, model) pair the load is split between,
 * with its own endpoint (its URL, and its model in `body.model`) and its indexes, which its records carry.
 */
export interface SplitTarget {
  endpoint: TargetSpec
  endpoint_index: number
  model_index: number
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
      /**
       * Several endpoints or models: the targets (the first is `target`), and each model's bodies
       * (`bodies` are model 0's). Absent in a run of one endpoint and one model.
       */
      split?: { targets: SplitTarget[]; modelBodies: Uint8Array[][] }
      /** --sessions: the conversations whose turns this thread builds and sends (bodies is then empty). */
      sessions?: SessionWork
      /** --jobs: the jobs whose turns this thread builds and sends (bodies is then empty). */
      jobs?: JobWork
    }
  | {
      type: 'round'
      round: Round
      /** This thread's share of the level: one per target (an empty one sits the level out). */
      shares: LevelShare[]
      /** False once any thread saw the server close after responses: no thread reuses connections then. */
      keepAlive: boolean
      /** Names the round, so an `enough` that arrives after it ended cannot stop the next one. */
      roundId: number
    }
  | { type: 'stop'; graceMs: number }
  /** --precision: the level's figures are precise enough; no new requests in that round, in-flight ones finish. */
  | { type: 'enough'; roundId: number }

export type FromWorker =
  | { type: 'ready' }
  /** in_flight: this thread's requests sent and not yet recorded, for the live metrics' gauge. */
  | { type: 'records'; records: RequestRecord[]; in_flight: number }
  | { type: 'level-done'; loop: LoopStats; outcome: RoundOutcome }
  | { type: 'failed'; message: string }

/** A session run's work: every thread holds all specs and takes sessions by its own sequence. */
export interface SessionWork {
  specs: SessionSpec[]
  thinkMs: number
  /** --tools: the functions every turn's body offers. */
  structured?: StructuredOutput
}

/** A job run's work: every thread holds all jobs and takes them by its own sequence, as for sessions. */
export interface JobWork {
  jobs: JobSpec[]
  /** --tools: the functions every turn's body offers. */
  structured?: StructuredOutput
}
