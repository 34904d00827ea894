import { round } from '../metrics/distribution.js'
import type { RequestRecord } from '../records/types.js'
import type { CalibrationPoint } from './calibration-design.js'
import { measurePoint, type PointMeasure } from './calibration-measure.js'
import {
  type CapacityModel,
  type CapacityParameters,
  engineParams,
  type FittedParameter,
  type PredictionInterval,
  type ReproducedLevel,
} from './capacity-model.js'
import { simulateClosedLoop } from './engine.js'
import { ModelEvidence } from './evidence.js'
import { fitCapacity } from './fit.js'

/** One calibration point as it ran: what was planned and every record it sent. */
export interface CalibrationRun {
  point: CalibrationPoint
  records: readonly RequestRecord[]
}

/** What the server said of itself, and where the context per slot came from. */
export interface CalibrationServer {
  engine: 'llama.cpp' | 'vllm' | 'sglang' | null
  /** The slots the server declared; null when it did not say. */
  slots: number | null
  contextPerSlot: number
  /** The server's self-description, or the user's --context (then the KV cache counts as assumed). */
  contextSource: 'server' | 'flag'
}

/** The share of measurements a calibrated model's prediction interval is meant to hold. */
export const INTERVAL_COVERAGE = 0.9

/**
 * The capacity model from a designed calibration: the prefill and decode evidence of its points fitted
 * as a run's is (fit.ts), whether a prefill stalls decoding chosen by reproducing its closed loops,
 * the slots from the server's word and the slot probe, every parameter said measured, the server's,
 * or assumed; and the prediction interval calibrated on how well the model reproduces the points
 * themselves. Pure.
 */
export function fitCalibration(runs: readonly CalibrationRun[], server: CalibrationServer): CapacityModel {
  const measures = runs.map((run) => measurePoint(run.point, run.records))
  const slots = resolveSlots(measures, server.slots)
  const evidence = new ModelEvidence(null)
  runs.forEach((run, i) => {
    // Each point its own timeline: decode evidence is read per level.
    const phase = run.point.purpose === 'prefill' ? 'calibration' : 'measure'
    for (const record of run.records) evidence.add({ ...record, level: i + 1, phase })
  })
  const seen = evidence.seen()
  const loops = measures.filter((m) => m.point.purpose !== 'prefill' && m.outputTokensPerS !== null)
  const decodePoints = measures.filter((m) => m.point.purpose === 'decode')
  const fitInput = {
    prefill: { ...seen.prefill, relative: true },
    decode: seen.decode,
    levels: [],
    mode: 'request_rate' as const,
    knee: null,
    workload: {
      input_tokens: Math.round(decodePoints[0]?.point.inputTokens ?? 0),
      output_tokens: Math.round(decodePoints[0]?.point.outputTokens ?? 0),
    },
  }
  const serverFor = (engine: CalibrationServer['engine']) => ({
    engine,
    slots: Math.round(slots.value),
    context_per_slot: server.contextPerSlot,
  })
  // Fitted both ways (without closed-loop levels fit.ts takes the stall from the engine's name), then
  // whichever reproduces the calibration's own closed loops better, each at its own size: a loop of
  // two waves is not the four-wave loop fit.ts's reproduction simulates.
  const ways = [
    fitCapacity({ ...fitInput, server: serverFor(null) }),
    fitCapacity({ ...fitInput, server: serverFor('llama.cpp') }),
  ].map((model) => ({ model, reproduced: reproduce(model.parameters, loops) }))
  const [overlap, stall] = ways as [(typeof ways)[0], (typeof ways)[0]]
  const best = stall.reproduced.mean <= overlap.reproduced.mean ? stall : overlap
  const other = best === stall ? overlap : stall
  const blocks = best === stall ? 1 : 0
  const fitted = {
    ...best.model,
    notes: best.model.notes.filter((note) => !note.startsWith('no closed-loop level to reproduce')),
    parameters: {
      ...best.model.parameters,
      prefill_blocks_decode: {
        value: blocks,
        low: null,
        high: null,
        measured: loops.length > 0,
        basis:
          `${blocks === 1 ? 'prefills stall decoding' : 'prefills overlap decoding'}: reproduces the calibration's ${loops.length} closed loops ` +
          `within ${pct(best.reproduced.mean)} on average (throughput and TPOT), against ${pct(other.reproduced.mean)} the other way`,
      },
    },
    reproduction: { levels: best.reproduced.levels, max_error: best.reproduced.max },
  }
  const parameters = withSources(fitted.parameters, slots, server)
  return {
    ...fitted,
    parameters,
    fitted_on: {
      ...fitted.fitted_on,
      levels: [...new Set(decodePoints.map((m) => m.point.concurrency))].sort((a, b) => a - b),
    },
    interval: intervalOf(parameters, measures),
  }
}

/**
 * The slots: the server's word where it gave one (the probe's count beside it), else the most
 * requests the probe saw decoding at once while more streams than that were sent, else assumed at
 * least what it saw.
 */
function resolveSlots(measures: readonly PointMeasure[], declared: number | null): FittedParameter {
  const probe = measures.find((m) => m.point.purpose === 'slots')
  const seen = probe?.mostDecoding ?? 0
  const streams = probe?.point.concurrency ?? 0
  const probeText =
    probe === undefined
      ? 'no slot probe ran'
      : `the slot probe of ${streams} streams saw at most ${seen} decoding at once`
  if (declared !== null)
    return {
      value: declared,
      low: declared,
      high: declared,
      measured: true,
      source: 'server',
      basis: `the server’s self-description (${probeText})`,
    }
  if (seen > 0 && seen < streams)
    return { value: seen, low: seen, high: seen, measured: true, source: 'measured', basis: probeText }
  const least = Math.max(1, seen)
  return {
    value: least,
    low: least,
    high: null,
    measured: false,
    source: 'assumed',
    basis: `${probeText}: at least ${least}, the server did not say`,
  }
}

function withSources(
  parameters: CapacityParameters,
  slots: FittedParameter,
  server: CalibrationServer,
): CapacityParameters {
  const sourced = (p: FittedParameter): FittedParameter => ({
    ...p,
    source: p.measured ? 'measured' : 'assumed',
  })
  const kv = parameters.kv_cache_tokens
  return {
    slots,
    prefill_base_ms: sourced(parameters.prefill_base_ms),
    prefill_ms_per_token: sourced(parameters.prefill_ms_per_token),
    ...(parameters.prefill_ms_per_token_sq === undefined
      ? {}
      : { prefill_ms_per_token_sq: sourced(parameters.prefill_ms_per_token_sq) }),
    decode_base_ms: sourced(parameters.decode_base_ms),
    decode_ms_per_seq: sourced(parameters.decode_ms_per_seq),
    ...(parameters.decode_ms_per_context_token === undefined
      ? {}
      : { decode_ms_per_context_token: sourced(parameters.decode_ms_per_context_token) }),
    prefill_blocks_decode: sourced(parameters.prefill_blocks_decode),
    kv_cache_tokens:
      kv === null
        ? null
        : {
            ...kv,
            measured: server.contextSource === 'server',
            source: server.contextSource === 'server' ? 'server' : 'assumed',
            basis: `${server.contextPerSlot} tokens of context per slot (${
              server.contextSource === 'server' ? 'the server’s self-description' : 'given by --context'
            }) × ${Math.round(slots.value)} slots`,
          },
  }
}

/** The model run on each closed loop of the calibration: throughput per loop, the mean |error| of throughput and TPOT. */
function reproduce(
  parameters: CapacityParameters,
  loops: readonly PointMeasure[],
): { levels: ReproducedLevel[]; mean: number; max: number | null } {
  const levels: ReproducedLevel[] = []
  const errors: number[] = []
  for (const m of loops) {
    const one = calibrationErrors(parameters, [m])
    const error = one.output_tokens_per_s[0]
    errors.push(...one.output_tokens_per_s, ...one.tpot_ms)
    if (error !== undefined && m.outputTokensPerS !== null)
      levels.push({
        level: m.point.concurrency,
        measured_tokens_per_s: round(m.outputTokensPerS),
        predicted_tokens_per_s: round(m.outputTokensPerS * (1 + error)),
        error: round(error, 4),
      })
  }
  const abs = errors.map(Math.abs)
  return {
    levels,
    mean: abs.length === 0 ? Number.POSITIVE_INFINITY : abs.reduce((a, b) => a + b, 0) / abs.length,
    max: levels.length === 0 ? null : Math.max(...levels.map((level) => Math.abs(level.error))),
  }
}

function pct(x: number): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '?'
}

/** The model's relative error on each point it can be set against: throughput, TTFT p50, TPOT p50. */
export function calibrationErrors(
  parameters: CapacityParameters,
  measures: readonly PointMeasure[],
): { output_tokens_per_s: number[]; ttft_ms: number[]; tpot_ms: number[] } {
  const params = engineParams(parameters)
  const errors = { output_tokens_per_s: [] as number[], ttft_ms: [] as number[], tpot_ms: [] as number[] }
  const relative = (predicted: number | null | undefined, measured: number | null) =>
    predicted == null || measured === null || !(measured > 0) ? null : predicted / measured - 1
  for (const m of measures) {
    if (m.ok === 0) continue
    const predicted = simulateClosedLoop(
      params,
      {
        concurrency: m.point.concurrency,
        requests: Math.max(m.ok, m.point.concurrency),
        inputTokens: Math.round(m.inputTokens ?? m.point.inputTokens),
        outputTokens: Math.max(1, Math.round(m.outputTokens ?? m.point.outputTokens)),
      },
      [50],
    )
    const push = (into: number[], error: number | null) => {
      if (error !== null && Number.isFinite(error)) into.push(error)
    }
    push(errors.ttft_ms, relative(predicted.ttft_ms.p50, m.ttftP50Ms))
    // A prefill probe decodes one token: its throughput and TPOT say nothing of the decode step.
    if (m.point.purpose === 'prefill') continue
    push(errors.output_tokens_per_s, relative(predicted.output_tokens_per_s, m.outputTokensPerS))
    push(errors.tpot_ms, relative(predicted.tpot_ms.p50, m.tpotP50Ms))
  }
  return errors
}

/**
 * The prediction interval: per figure, the split-conformal quantile of the model's |relative error|
 * on the calibration's points (the ⌈(n + 1) × 0.9⌉-th smallest of n, the largest when n is small), so
 * that about 9 in 10 points like them fall inside. In-sample: a held-out workload is no calibration
 * point, so docs/benchmarks.md publishes how many held-out measurements it really held.
 */
function intervalOf(parameters: CapacityParameters, measures: readonly PointMeasure[]): PredictionInterval {
  const errors = calibrationErrors(parameters, measures)
  const quantile = (values: readonly number[]) => conformalQuantile(values, INTERVAL_COVERAGE)
  const counts = `${errors.output_tokens_per_s.length} closed loops (throughput, TPOT) and ${errors.ttft_ms.length} points (TTFT)`
  return {
    coverage: INTERVAL_COVERAGE,
    relative_error: {
      output_tokens_per_s: quantile(errors.output_tokens_per_s),
      ttft_ms: quantile(errors.ttft_ms),
      tpot_ms: quantile(errors.tpot_ms),
    },
    basis: `the model's |relative error| reproducing the calibration's ${counts}: the ⌈(n + 1) × ${INTERVAL_COVERAGE}⌉-th smallest of each figure's n`,
  }
}

/** The ⌈(n + 1) × coverage⌉-th smallest |value| (the largest when that rank passes n); 0 with none. */
export function conformalQuantile(values: readonly number[], coverage: number): number {
  const sorted = values.map(Math.abs).sort((a, b) => a - b)
  if (sorted.length === 0) return 0
  const rank = Math.min(sorted.length, Math.ceil((sorted.length + 1) * coverage))
  return Math.round((sorted[rank - 1] as number) * 10000) / 10000
}
