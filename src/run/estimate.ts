import type { RunConfig } from '../config/types.js'
import { priceTokens } from '../metrics/workload-figures.js'
import type { CostEstimate } from '../result/run-meta.js'
import { levelValues, timedLevelSeconds } from './level-plan.js'

export interface EstimateInputs {
  /** Mean requested lengths of the planned prompts. */
  input_mean: number
  output_mean: number
  /**
   * A closed-loop timed level sends as many requests as its streams finish: projected from one
   * request's end-to-end time (the preflight's, scaled to the planned output). Null = unknown.
   */
  request_seconds: number | null
  /** This process's share of the load (shards): 1 for a whole run. */
  share: number
  /** --trace: the rows replayed at every level; null or absent = no trace. */
  trace_rows?: number | null
}

export function estimateRun(config: RunConfig, inputs: EstimateInputs): CostEstimate | null {
  const { load } = config
  const rateMode = load.mode === 'request_rate'
  const values = levelValues(config)
  let requests = 0
  let basis: string
  const windowS = timedLevelSeconds(load)
  if (inputs.trace_rows != null) {
    requests = values.length * inputs.trace_rows
    basis = `${values.length} speeds × ${inputs.trace_rows} trace rows`
  } else if (load.requests_per_level !== null) {
    requests = values.length * load.requests_per_level
    basis = `${values.length} levels × ${load.requests_per_level} requests`
  } else if (rateMode) {
    requests = values.reduce((sum, rate) => sum + Math.ceil(rate * windowS), 0)
    basis = `rates × ${windowS} s per level`
  } else {
    if (inputs.request_seconds === null || inputs.request_seconds <= 0) return null
    const perStream = Math.ceil(windowS / inputs.request_seconds)
    requests = values.reduce((sum, streams) => sum + streams * perStream, 0)
    basis = `projected: streams × ${windowS} s / ${inputs.request_seconds.toFixed(2)} s per request (no queueing; an upper bound while the server keeps up)`
  }
  // A shard runs its share of both the measured requests and the warm-up.
  requests = Math.ceil((requests + values.length * load.warmup_requests) * inputs.share)
  basis += ` + ${load.warmup_requests} warm-up per level`
  const inputTokens = requests * inputs.input_mean
  const outputTokens = requests * inputs.output_mean
  const prices = config.pricing
  return {
    requests,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cost: prices === null ? null : priceTokens(inputTokens, outputTokens, prices),
    currency: prices?.currency ?? null,
    basis,
  }
}

export function describeEstimate(estimate: CostEstimate): string {
  const cost =
    estimate.cost === null ? '' : `, estimated cost ${estimate.cost.toFixed(4)} ${estimate.currency}`
  return (
    `plan: ${estimate.requests} requests, ~${estimate.input_tokens} input and ≤${estimate.output_tokens} output tokens` +
    `${cost} (${estimate.basis})`
  )
}
