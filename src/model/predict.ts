import { findSaturation } from '../analysis/saturation.js'
import type { ScalingFigures } from '../analysis/scaling-step.js'
import { type Distribution, percentileKey, round } from '../metrics/distribution.js'
import { worseThan } from '../metrics/measures.js'
import type { Slo } from '../metrics/slo.js'
import { type CapacityModel, engineParams, type ModelCorner } from './capacity-model.js'
import { type LevelPrediction, simulatedRequests } from './engine.js'
import { simulateClosedLoopOnce } from './simulation-memo.js'

/** What to predict: a workload, the levels to predict it at, the SLOs to hold it to, a rate to size replicas for. */
export interface PredictRequest {
  input_tokens: number
  output_tokens: number
  levels: readonly number[]
  slos: readonly Slo[]
  /** Requests per second to serve: how many replicas that takes. Null = not asked. */
  rate: number | null
}

/** A predicted figure: the model's point and its 95% prediction interval. */
export interface Predicted {
  value: number
  low: number
  high: number
}

export interface PredictedLevel {
  level: number
  output_tokens_per_s: Predicted
  requests_per_s: Predicted
  /** Keyed as a result's distributions: mean, p50, p90, p95, p99. */
  ttft_ms: Record<string, Predicted>
  tpot_ms: Record<string, Predicted>
  e2e_ms: Record<string, Predicted>
  /** Every SLO met at the model's point; null when no SLO was given. */
  meets_slos: boolean | null
}

export interface Prediction {
  workload: { input_tokens: number; output_tokens: number }
  levels: PredictedLevel[]
  /** The knee of the predicted curve (the rule the runs use), with the levels it ranges over at the interval's ends. */
  knee: { value: number | null; low: number | null; high: number | null; text: string }
  /** The highest level meeting every SLO; null when no SLO was given. */
  slo_capacity: { value: number | null; low: number | null; high: number | null; text: string } | null
  /** How many replicas serve `rate` requests/s at the SLO capacity (or the knee); null when not asked. */
  replicas: {
    rate: number
    per_replica_requests_per_s: Predicted
    value: number
    low: number
    high: number
    text: string
  } | null
  /** How the intervals were made, in words. */
  interval: string
  /** A calibrated model's interval coverage (0.9); absent where the interval is the parameters' 95% corners widened. */
  coverage?: number
  /** Where the prediction leaves what the fit saw. */
  warnings: string[]
}

const CORNERS: readonly ModelCorner[] = ['point', 'slow', 'fast']

/**
 * The fitted model run in virtual time on another workload: each level's figures at the model's point
 * and at both ends of its parameters' intervals, the interval then widened by the largest error the
 * model made reproducing the run it was fitted on. Pure and deterministic.
 */
export function predict(model: CapacityModel, request: PredictRequest): Prediction {
  const widths = widthsOf(model)
  const percentiles = [...new Set([50, 90, 95, 99, ...request.slos.map((slo) => slo.percentile)])]
  const byCorner = new Map(
    CORNERS.map((corner) => {
      const params = engineParams(model.parameters, corner)
      return [
        corner,
        request.levels.map((level) =>
          simulateClosedLoopOnce(
            params,
            {
              concurrency: level,
              requests: simulatedRequests(level),
              inputTokens: request.input_tokens,
              outputTokens: request.output_tokens,
            },
            percentiles,
          ),
        ),
      ]
    }),
  )
  const at = (corner: ModelCorner) => byCorner.get(corner) as LevelPrediction[]
  const levels = request.levels.map((level, i) => {
    const each = CORNERS.map((corner) => at(corner)[i] as LevelPrediction)
    const point = each[0] as LevelPrediction
    // A calibrated error already holds the parameters' own uncertainty (it is the model's miss on
    // the points they were fitted on): spread around the point alone, not the corners too.
    const around = widths.coverage === undefined ? each : each.slice(0, 1)
    const figure = (of: (p: LevelPrediction) => number): Predicted =>
      spread(around.map(of), widths.output_tokens_per_s)
    const requestsPerS = (p: LevelPrediction) => p.output_tokens_per_s / request.output_tokens
    return {
      level,
      output_tokens_per_s: figure((p) => p.output_tokens_per_s),
      requests_per_s: figure(requestsPerS),
      ttft_ms: distributionOf(around, (p) => p.ttft_ms, widths.ttft_ms),
      tpot_ms: distributionOf(around, (p) => p.tpot_ms, widths.tpot_ms),
      e2e_ms: distributionOf(around, (p) => p.e2e_ms, widths.e2e_ms),
      meets_slos: request.slos.length === 0 ? null : meetsSlos(point, request.slos),
    }
  })
  // Gauges only from slots the run saw: an assumed count is a lower bound ("at least 6, the most in
  // flight"), and gauges built on it put the knee of an 8-slot server at 4. Without them the curve decides,
  // as it does in a run whose server shows no gauges.
  const slots = model.parameters.slots.measured ? Math.max(1, Math.round(model.parameters.slots.value)) : null
  const knees = CORNERS.map((corner) => kneeOf(request.levels, at(corner), slots))
  const capacities = CORNERS.map((corner) => sloCapacityOf(request.levels, at(corner), request.slos))
  const knee = rangeOf(knees, 'knee', request.levels)
  const slo_capacity = request.slos.length === 0 ? null : rangeOf(capacities, 'SLO capacity', request.levels)
  return {
    workload: { input_tokens: request.input_tokens, output_tokens: request.output_tokens },
    levels,
    knee,
    slo_capacity,
    replicas: request.rate === null ? null : replicasFor(request.rate, levels, slo_capacity ?? knee),
    interval: widths.text,
    ...(widths.coverage === undefined ? {} : { coverage: widths.coverage }),
    warnings: warningsFor(model, request),
  }
}

/**
 * How far each figure's interval reaches past the model run at its parameters' ends: a calibrated
 * model's own 90% errors per figure (calibration-fit.ts); else the largest error reproducing the run
 * it was fitted on, for every figure alike.
 */
function widthsOf(model: CapacityModel): {
  output_tokens_per_s: number
  ttft_ms: number
  tpot_ms: number
  e2e_ms: number
  text: string
  coverage?: number
} {
  const corners =
    'each figure at the fitted parameters, between the model run at the slow and the fast ends of their 95% intervals'
  const calibrated = model.interval
  if (calibrated !== undefined) {
    const e = calibrated.relative_error
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`
    return {
      ...e,
      e2e_ms: Math.max(e.ttft_ms, e.tpot_ms),
      coverage: calibrated.coverage,
      text:
        `${Math.round(calibrated.coverage * 100)}% prediction interval: each figure at the fitted parameters, ± the model's calibrated error ` +
        `(throughput ${pct(e.output_tokens_per_s)}, TTFT ${pct(e.ttft_ms)}, TPOT ${pct(e.tpot_ms)}: ${calibrated.basis})`,
    }
  }
  const widen = model.reproduction.max_error ?? 0
  return {
    output_tokens_per_s: widen,
    ttft_ms: widen,
    tpot_ms: widen,
    e2e_ms: widen,
    text:
      corners +
      (widen > 0
        ? `, widened by ${(widen * 100).toFixed(1)}% (the largest error reproducing the fitted run)`
        : ''),
  }
}

function spread(values: readonly number[], widen: number): Predicted {
  const finite = values.filter(Number.isFinite)
  return {
    value: round(values[0] ?? Number.NaN, 2),
    low: round(Math.min(...finite) * (1 - widen), 2),
    high: round(Math.max(...finite) * (1 + widen), 2),
  }
}

function distributionOf(
  each: readonly LevelPrediction[],
  of: (p: LevelPrediction) => Distribution,
  widen: number,
): Record<string, Predicted> {
  const keys = Object.keys(of(each[0] as LevelPrediction)).filter(
    (key) => key === 'mean' || key.startsWith('p'),
  )
  const out: Record<string, Predicted> = {}
  for (const key of keys) {
    const values = each.map((p) => of(p)[key] ?? Number.NaN)
    if (values.every(Number.isFinite)) out[key] = spread(values, widen)
  }
  return out
}

function meetsSlos(level: LevelPrediction, slos: readonly Slo[]): boolean {
  return slos.every((slo) => {
    const distribution =
      slo.metric === 'ttft' ? level.ttft_ms : slo.metric === 'tpot' ? level.tpot_ms : level.e2e_ms
    const value = distribution[percentileKey(slo.percentile)] ?? null
    return value !== null && !worseThan(slo, value, slo.threshold)
  })
}

/**
 * The knee by the run's own rule (analysis/saturation.ts): the server's gauges first, then the curve.
 * The engine's gauges in a closed loop with no client overhead are exact: every stream is in flight,
 * min(streams, slots) of them run and the rest wait (slots null: not measured, so no gauges); TTFT
 * p95 is the latency judged, as a run judges it by default. So a prediction and a measurement of the same workload name the same knee.
 */
function kneeOf(
  levels: readonly number[],
  predicted: readonly LevelPrediction[],
  slots: number | null,
): number | null {
  const figures = levels.map((level, i): ScalingFigures => {
    const p = predicted[i] as LevelPrediction
    const gauges =
      slots === null
        ? null
        : {
            running: { mean: Math.min(level, slots), max: Math.min(level, slots) },
            waiting: { mean: Math.max(0, level - slots), max: Math.max(0, level - slots) },
          }
    return {
      value: level,
      output_tokens_per_s: p.output_tokens_per_s,
      ttft_ms: p.ttft_ms,
      success_rate: 1,
      achieved_concurrency: { mean: level, max: level },
      server: gauges,
    } as ScalingFigures
  })
  return findSaturation(figures, 'p95', false, slots)?.value ?? null
}

function sloCapacityOf(
  levels: readonly number[],
  predicted: readonly LevelPrediction[],
  slos: readonly Slo[],
): number | null {
  let capacity: number | null = null
  predicted.forEach((level, i) => {
    if (meetsSlos(level, slos)) capacity = levels[i] as number
  })
  return capacity
}

/** The point's answer and the range the corners give; a corner with no answer counts as beyond the levels. */
function rangeOf(
  values: readonly (number | null)[],
  what: string,
  levels: readonly number[],
): { value: number | null; low: number | null; high: number | null; text: string } {
  const [point] = values
  const found = values.filter((v): v is number => v !== null)
  const low = found.length === 0 ? null : Math.min(...found)
  const high = found.length < values.length ? null : Math.max(...found)
  const highest = Math.max(...levels)
  const range = low === high ? '' : ` (${low ?? '?'}–${high ?? `beyond ${highest}`} across the interval)`
  const text =
    point == null
      ? what === 'knee'
        ? `no knee predicted up to ${highest}: throughput still grows`
        : `no level predicted to meet the SLOs`
      : `${what} predicted at ${point}${range}`
  return { value: point ?? null, low, high, text }
}

function replicasFor(
  rate: number,
  levels: readonly PredictedLevel[],
  at: { value: number | null },
): Prediction['replicas'] {
  const level = levels.find((l) => l.level === at.value) ?? levels[levels.length - 1]
  if (level === undefined) return null
  const perReplica = level.requests_per_s
  const count = (perS: number) => (perS > 0 ? Math.ceil(rate / perS) : Number.POSITIVE_INFINITY)
  const value = count(perReplica.value)
  return {
    rate,
    per_replica_requests_per_s: perReplica,
    value,
    low: count(perReplica.high),
    high: count(perReplica.low),
    text:
      `${value} replica(s) for ${rate} requests/s (${count(perReplica.high)}–${count(perReplica.low)} across the interval): ` +
      `each serves ${perReplica.value.toFixed(2)} requests/s at ${level.level} streams`,
  }
}

/**
 * Where the asked workload leaves what the evidence covered, said plainly: a prompt longer than any
 * the prefill was seen at, or a context per sequence beyond any the decode step was seen with, is an
 * extrapolation of the fitted curve, however good its fit inside the range.
 */
function outsideRange(model: CapacityModel, request: PredictRequest): string[] {
  const validity = model.validity
  if (validity === undefined) return []
  const out: string[] = []
  const prompts = validity.prompt_tokens
  if (prompts !== null && (request.input_tokens > prompts.max || request.input_tokens < prompts.min))
    out.push(
      `outside the calibrated range: prompts of ${request.input_tokens} tokens, where the prefill was seen at ${prompts.min}–${prompts.max}; the prefill time is extrapolated`,
    )
  const contexts = validity.context_tokens_per_sequence
  const context = request.input_tokens + request.output_tokens / 2
  if (contexts !== null && context > contexts.max * 1.1)
    out.push(
      `outside the calibrated range: about ${Math.round(context)} tokens of context per decoding sequence, where the decode step was seen with up to ${contexts.max}; the decode step is extrapolated`,
    )
  return out
}

function warningsFor(model: CapacityModel, request: PredictRequest): string[] {
  const warnings: string[] = []
  const p = model.parameters
  for (const parameter of [
    p.prefill_base_ms,
    p.prefill_ms_per_token,
    p.decode_base_ms,
    p.decode_ms_per_seq,
    p.slots,
  ])
    if (!parameter.measured) warnings.push(`assumed, not measured: ${parameter.basis}`)
  const fitted = model.fitted_on
  if (request.input_tokens > 4 * Math.max(1, fitted.input_tokens) && !p.prefill_ms_per_token.measured)
    warnings.push(
      `prompts of ${request.input_tokens} tokens are far from the ${fitted.input_tokens} the fit saw`,
    )
  const kv = p.kv_cache_tokens?.value ?? null
  const perRequest = request.input_tokens + request.output_tokens
  const slots = Math.round(p.slots.value)
  if (kv !== null && perRequest * Math.min(slots, Math.max(...request.levels)) > kv)
    warnings.push(
      `${Math.min(slots, Math.max(...request.levels))} requests of ${perRequest} tokens overfill the KV cache of ${kv} tokens: the model neither evicts nor preempts, so it is optimistic there`,
    )
  if (p.prefill_blocks_decode.measured === false) warnings.push(p.prefill_blocks_decode.basis)
  warnings.push(...outsideRange(model, request))
  return [...warnings, ...model.notes]
}
