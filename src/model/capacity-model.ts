import { resolveSimParams, type SimParams } from './engine.js'

/**
 * A server's capacity as llmbench fitted it from one run (docs/figures.md, "The capacity model"): the
 * parameters of the engine in ./engine.ts (slots, prefill per prompt token, decode step against the
 * running batch, whether a prefill stalls decoding), each with its 95% interval and where it came from.
 * The same engine then predicts other workloads (./predict.ts) and serves as the user's server's twin
 * (`llmbench sim --from DIR`).
 */
export interface FittedParameter {
  value: number
  /** 95% interval ends; null where the fit left none (too few points, or an assumed value). */
  low: number | null
  high: number | null
  /** False for a value assumed for want of evidence: `basis` says what was assumed. */
  measured: boolean
  /** Where it came from, in words: "prompt_ms against prompt_n of 14 requests at 4 lengths". */
  basis: string
  /**
   * A calibrated model's word for where it came from (`model --calibrate`): measured by the
   * calibration, the server's self-description, or assumed. Absent in a model fitted on a run.
   */
  source?: ParameterSource
}

export type ParameterSource = 'measured' | 'server' | 'assumed'

export interface CapacityParameters {
  slots: FittedParameter
  prefill_base_ms: FittedParameter
  prefill_ms_per_token: FittedParameter
  decode_base_ms: FittedParameter
  decode_ms_per_seq: FittedParameter
  /**
   * Prefill cost per prompt token squared (attention over the prompt): present where the evidence had
   * three prompt lengths or more; its value is 0 unless its interval excludes 0. Absent in older results.
   */
  prefill_ms_per_token_sq?: FittedParameter
  /**
   * Decode step cost per token of context held by the requests in a slot: present where the evidence
   * decoded at two context sizes or more at one batch; 0 unless its interval excludes 0. Absent in older results.
   */
  decode_ms_per_context_token?: FittedParameter
  /** 1: a prefill stalls every decoding stream (one compute resource, as llama.cpp on a CPU); 0: they overlap. */
  prefill_blocks_decode: FittedParameter
  /** Tokens of KV cache the server holds in all; null when it did not say. */
  kv_cache_tokens: FittedParameter | null
}

/** One measured level against what the fitted model says of it. */
export interface ReproducedLevel {
  level: number
  measured_tokens_per_s: number
  predicted_tokens_per_s: number
  /** predicted / measured − 1. */
  error: number
}

export interface CapacityModel {
  parameters: CapacityParameters
  /** The workload the run measured, which the fit rests on. */
  fitted_on: { input_tokens: number; output_tokens: number; levels: number[] }
  /**
   * The model run on the measured workload at every measured level: how well it reproduces what was
   * measured. `max_error` (the largest |error|) widens every prediction's interval.
   */
  reproduction: { levels: ReproducedLevel[]; max_error: number | null }
  /** What the fit could not see or had to assume, in words. */
  notes: string[]
  /**
   * The range the evidence covered, where a prediction interpolates rather than extrapolates: the
   * prompt lengths the prefill was seen at, and the tokens of context per decoding sequence the decode
   * step was seen with. A null range was not seen. Absent in results of older versions.
   */
  validity?: { prompt_tokens: TokenRange | null; context_tokens_per_sequence: TokenRange | null }
  /**
   * A calibrated model's prediction interval (`model --calibrate`): the relative error within which
   * the model reproduced about `coverage` of the calibration's own points, per figure. Predictions
   * from it are given this interval instead of the parameters' 95% corners widened by the largest error.
   */
  interval?: PredictionInterval
}

export interface PredictionInterval {
  coverage: number
  relative_error: { output_tokens_per_s: number; ttft_ms: number; tpot_ms: number }
  /** How it was found, in words. */
  basis: string
}

export interface TokenRange {
  min: number
  max: number
}

/** Which end of every cost parameter's interval: the model's point, its slow end or its fast end. */
export type ModelCorner = 'point' | 'slow' | 'fast'

/** The engine parameters of a model, at its point values or at one end of every cost parameter's interval. */
export function engineParams(p: CapacityParameters, corner: ModelCorner = 'point'): SimParams {
  const at = (parameter: FittedParameter): number => {
    const end = corner === 'slow' ? parameter.high : corner === 'fast' ? parameter.low : null
    return Math.max(0, end ?? parameter.value)
  }
  return resolveSimParams({
    slots: Math.max(1, Math.round(p.slots.value)),
    prefill_base_ms: at(p.prefill_base_ms),
    prefill_ms_per_token: at(p.prefill_ms_per_token),
    decode_base_ms: at(p.decode_base_ms),
    decode_ms_per_seq: at(p.decode_ms_per_seq),
    ...(p.prefill_ms_per_token_sq === undefined
      ? {}
      : { prefill_ms_per_token_sq: at(p.prefill_ms_per_token_sq) }),
    ...(p.decode_ms_per_context_token === undefined
      ? {}
      : { decode_ms_per_context_token: at(p.decode_ms_per_context_token) }),
    prefill_blocks_decode: p.prefill_blocks_decode.value === 1 ? 1 : 0,
    ...(p.kv_cache_tokens === null
      ? {}
      : { kv_cache_tokens: Math.max(1, Math.round(p.kv_cache_tokens.value)) }),
  })
}
