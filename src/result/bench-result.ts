import type { Answer } from '../analysis/answer.js'
import type { Drift } from '../analysis/drift.js'
import type { JobSaturation } from '../analysis/job-knee.js'
import type { RampResult } from '../analysis/ramp-knee.js'
import type { Repeats } from '../analysis/repeats.js'
import type { Saturation } from '../analysis/saturation.js'
import type { SearchOutcome } from '../analysis/search.js'
import type { Capacity } from '../metrics/slo.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { CapacityModel } from '../model/capacity-model.js'
import type { RunMeta } from './run-meta.js'
import type { TargetResult } from './target-results.js'

/** /2: a level's value is `value` with `mode` beside it (/1 called it `concurrency`, also when it was a rate). */
export const RESULT_SCHEMA = 'llmbench.result/2'

/** The summary of a run: what bench_result.json holds. */
export interface BenchResult {
  schema: typeof RESULT_SCHEMA
  meta: RunMeta
  definitions: Readonly<Record<string, string>>
  levels: LevelSummary[]
  saturation: Saturation | null
  /**
   * Job runs (--jobs): the knee read on jobs per hour and JCT p90 by the same rules (job-knee.ts),
   * beside `saturation` (read on output tokens/s and TTFT); absent otherwise.
   */
  job_saturation?: JobSaturation
  /** The saturation point in words, also when there is none. */
  saturation_summary: string
  /** The highest level meeting every SLO; null when none does or no SLO was set. */
  capacity: Capacity | null
  capacity_summary: string | null
  /** The answer in one place: the SLO capacity when SLOs were set, else the knee (answer.ts); absent in older results. */
  answer?: Answer
  /** Several endpoints or models: each target's curve and knee on its own load; absent with one of each. */
  targets?: TargetResult[]
  /** --search: the answer it found, its bracket and how many levels it took; absent otherwise. */
  search?: SearchOutcome
  /** What to change about the run itself: a coarse ladder, outputs too short, ... */
  advice: string[]
  /** Tokens and cost: measured levels, everything sent, and the estimate made before the run. */
  cost: RunCost | null
  /**
   * The first level measured again after the last (the control) against its first measurement;
   * absent when no control was run (one level, interrupted, request-rate mode, --no-control, older versions).
   */
  drift?: Drift
  /**
   * The server's capacity model fitted from this run (model/fit.ts): what `predict` and `sim --from`
   * use. Absent where nothing generates tokens and in results of older versions.
   */
  model?: CapacityModel
  /** --ramp: the knee read on the continuous ramp, slice by slice (analysis/ramp-knee.ts); absent for steps. */
  ramp?: RampResult
  /** --repeat N (N ≥ 2): each run's figures per level, the spread between the runs and each run's knee; absent otherwise. */
  repeats?: Repeats
}

export interface RunCost {
  currency: string
  estimated: number | null
  /** Sum over the measured levels. */
  measured: number
  /** Every request sent, warm-up and probes included. */
  total: number | null
}
