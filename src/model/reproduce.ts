import { round } from '../metrics/distribution.js'
import { type CapacityParameters, engineParams, type ReproducedLevel } from './capacity-model.js'
import { simulateClosedLoop } from './engine.js'

/** A measured level as reproduce reads it. */
export interface MeasuredLevel {
  value: number
  requests: number
  output_tokens_per_s: number
  output_tokens_per_s_steady: number
  steady_window: unknown
  input: { server_mean: number | null; requested_mean: number | null }
  output: { tokens: { mean: number | null } }
}

/** Enough requests for the simulated level to reach its steady state, and few enough to stay quick. */
const MAX_SIMULATED_REQUESTS = 400

/**
 * The model run in virtual time on each measured level's own workload (its mean prompt and output
 * lengths, its streams): the throughput it predicts against the throughput measured, steady where the
 * level had a steady window (as the simulated figure is).
 */
export function reproduceLevels(
  parameters: CapacityParameters,
  levels: readonly MeasuredLevel[],
): { levels: ReproducedLevel[]; max_error: number | null } {
  const params = engineParams(parameters)
  const reproduced = levels.flatMap((level) => {
    const measuredRate =
      level.steady_window != null ? level.output_tokens_per_s_steady : level.output_tokens_per_s
    const outputTokens = Math.max(1, Math.round(level.output.tokens.mean ?? 0))
    if (!(measuredRate > 0)) return []
    const predicted = simulateClosedLoop(params, {
      concurrency: level.value,
      requests: Math.min(MAX_SIMULATED_REQUESTS, Math.max(level.requests, 4 * level.value)),
      inputTokens: Math.round(level.input.server_mean ?? level.input.requested_mean ?? 0),
      outputTokens,
    })
    return [
      {
        level: level.value,
        measured_tokens_per_s: round(measuredRate),
        predicted_tokens_per_s: round(predicted.output_tokens_per_s),
        error: round(predicted.output_tokens_per_s / measuredRate - 1, 4),
      },
    ]
  })
  const max = reproduced.reduce((most, level) => Math.max(most, Math.abs(level.error)), 0)
  return { levels: reproduced, max_error: reproduced.length === 0 ? null : max }
}
