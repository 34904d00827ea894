import type { CapacityModel, CapacityParameters, FittedParameter } from '../model/capacity-model.js'
import { type Predicted, predict } from '../model/predict.js'
import type { BenchResult } from '../result/bench-result.js'

/** A workload to ask the model about: mean prompt and output tokens. */
export interface Workload {
  input_tokens: number
  output_tokens: number
}

/** Common shapes: a chat turn, a longer chat, a RAG prompt, a long document. */
export const COMMON_WORKLOADS: readonly Workload[] = [
  { input_tokens: 128, output_tokens: 128 },
  { input_tokens: 512, output_tokens: 256 },
  { input_tokens: 2048, output_tokens: 256 },
  { input_tokens: 8192, output_tokens: 512 },
]

/** Doublings past the highest level tried when the knee is not inside the levels, and the level never passed. */
const MAX_EXTRA_DOUBLINGS = 4
const MAX_LEVEL = 1024

/** One workload's predicted knee, or why it was not predicted. */
export interface WorkloadRow {
  workload: Workload
  /** The knee at the model's point, with the levels it ranges over across the interval; null = none found. */
  knee: { value: number | null; low: number | null; high: number | null } | null
  /** Output tokens/s at the knee (at the highest level asked when there is none), with its interval. */
  throughput: Predicted | null
  /** The levels predicted over. */
  levels: number[]
  /** Set when the workload was not predicted (it does not fit the server's context). */
  skipped: string | null
}

/** A table both renderers draw: a title, its heads and rows of text. */
export interface WhatIfTable {
  title: string
  head: string[]
  rows: string[][]
}

/** The report's "What if" section: tables, then lines under them. */
export interface WhatIf {
  intro: string
  tables: WhatIfTable[]
  /** The model's notes and the predictions' warnings, each once. */
  notes: string[]
}

const PARAMETERS: readonly { key: keyof CapacityParameters; label: string }[] = [
  { key: 'slots', label: 'slots (requests at once)' },
  { key: 'prefill_base_ms', label: 'prefill, fixed (ms)' },
  { key: 'prefill_ms_per_token', label: 'prefill per prompt token (ms)' },
  { key: 'prefill_ms_per_token_sq', label: 'prefill per prompt token squared (ms)' },
  { key: 'decode_base_ms', label: 'decode step, fixed (ms)' },
  { key: 'decode_ms_per_seq', label: 'decode step per sequence in the batch (ms)' },
  { key: 'decode_ms_per_context_token', label: 'decode step per token of context held (ms)' },
  { key: 'prefill_blocks_decode', label: 'a prefill stalls decoding (1 yes, 0 no)' },
  { key: 'kv_cache_tokens', label: 'KV cache (tokens)' },
]

/** A figure in three significant digits, whole numbers as they are: 0.202, 21.3, 1024. */
export function figure(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  if (Number.isInteger(value) || Math.abs(value) >= 100) return String(Math.round(value))
  return String(Number(value.toPrecision(3)))
}

const range = (low: number | null, high: number | null): string =>
  low === null && high === null
    ? '–'
    : `${low === null ? '?' : figure(low)}–${high === null ? '?' : figure(high)}`

/** The fitted parameters, one row each (a parameter the fit left out, as an unsaid KV cache, is not shown). */
export function parameterRows(model: CapacityModel): string[][] {
  return PARAMETERS.flatMap(({ key, label }) => {
    const parameter: FittedParameter | null | undefined = model.parameters[key]
    if (parameter == null) return []
    return [
      [
        label,
        figure(parameter.value),
        range(parameter.low, parameter.high),
        parameter.measured ? 'measured' : 'assumed',
        parameter.basis,
      ],
    ]
  })
}

/** The largest prompt + output a request may have on this server, with what it is; null when it did not say. */
function contextLimit(result: BenchResult): { tokens: number; what: string } | null {
  const server = result.meta.server
  if (server?.context_per_slot != null)
    return { tokens: server.context_per_slot, what: 'tokens of context per slot' }
  if (server?.max_model_len != null) return { tokens: server.max_model_len, what: 'max_model_len' }
  return null
}

/**
 * The levels to predict over: the run's own in a closed loop; a doubling ladder from 1 to twice the
 * fitted slots otherwise (an open loop's levels are rates, not streams).
 */
function baseLevels(result: BenchResult, model: CapacityModel): number[] {
  if ((result.meta.load.mode ?? 'concurrency') === 'concurrency' && model.fitted_on.levels.length > 0)
    return [...new Set(model.fitted_on.levels)].sort((a, b) => a - b)
  const ladder = [1]
  const top = Math.min(MAX_LEVEL, 2 * Math.max(1, Math.round(model.parameters.slots.value)))
  while ((ladder.at(-1) as number) < top) ladder.push(2 * (ladder.at(-1) as number))
  return ladder
}

/** The levels past the highest, doubling, bounded. */
function extended(levels: readonly number[]): number[] {
  const more = [...levels]
  for (let i = 0; i < MAX_EXTRA_DOUBLINGS && (more.at(-1) as number) * 2 <= MAX_LEVEL; i++)
    more.push((more.at(-1) as number) * 2)
  return more
}

/**
 * Each workload's predicted knee and the throughput there, by `predict` over the run's levels and,
 * when the knee is not inside them, over a few doublings more. A workload whose prompt and output
 * do not fit the server's context is skipped, with the reason.
 */
export function workloadRows(
  result: BenchResult,
  model: CapacityModel,
  workloads: readonly Workload[] = COMMON_WORKLOADS,
): { rows: WorkloadRow[]; warnings: string[] } {
  const limit = contextLimit(result)
  const warnings: string[] = []
  const rows = workloads.map((workload): WorkloadRow => {
    const tokens = workload.input_tokens + workload.output_tokens
    if (limit !== null && tokens > limit.tokens)
      return {
        workload,
        knee: null,
        throughput: null,
        levels: [],
        skipped: `${workload.input_tokens} + ${workload.output_tokens} tokens do not fit the server's ${limit.tokens} ${limit.what}`,
      }
    const ask = (levels: readonly number[]) => predict(model, { ...workload, levels, slos: [], rate: null })
    let levels = baseLevels(result, model)
    let prediction = ask(levels)
    if (prediction.knee.value === null && levels.length < extended(levels).length) {
      levels = extended(levels)
      prediction = ask(levels)
    }
    warnings.push(...prediction.warnings)
    const { value, low, high } = prediction.knee
    const at = prediction.levels.find((level) => level.level === value) ?? prediction.levels.at(-1)
    return {
      workload,
      knee: { value, low, high },
      throughput: at?.output_tokens_per_s ?? null,
      levels,
      skipped: null,
    }
  })
  return { rows, warnings }
}

function workloadCells(row: WorkloadRow): string[] {
  const name = `${row.workload.input_tokens} / ${row.workload.output_tokens}`
  if (row.skipped !== null || row.knee === null) return [name, '–', '–', `skipped: ${row.skipped ?? ''}`]
  const top = row.levels.at(-1) ?? 0
  const throughput = row.throughput
  const rate =
    throughput === null
      ? '–'
      : `${figure(throughput.value)} (${figure(throughput.low)}–${figure(throughput.high)})`
  if (row.knee.value === null)
    return [name, `none up to ${top}`, `${rate} at ${top}`, 'throughput still grows at the highest level']
  const { low, high } = row.knee
  const kneeRange = low === high ? '' : ` (${low ?? '?'}–${high ?? `beyond ${top}`})`
  return [name, `${row.knee.value}${kneeRange}`, rate, `predicted over ${row.levels.join(', ')}`]
}

/** The levels the fit saw, as the run counts them: "levels 1, 2, 4", "rates 2, 8 requests/s". */
function levelsRun(result: BenchResult): string {
  const levels = result.model?.fitted_on.levels.join(', ') ?? ''
  return result.meta.load.mode === 'request_rate' ? `rates ${levels} requests/s` : `levels ${levels}`
}

/** Per measured level, the throughput measured against the model's, from `model.reproduction`. */
function fitRows(model: CapacityModel): string[][] {
  return model.reproduction.levels.map((level) => [
    String(level.level),
    figure(level.measured_tokens_per_s),
    figure(level.predicted_tokens_per_s),
    `${level.error >= 0 ? '+' : ''}${(level.error * 100).toFixed(1)}%`,
  ])
}

/** Said in place of the knee table when it was not predicted (the end of a run). */
export const KNEES_NOT_PREDICTED =
  'The predicted knees of other workloads are not computed at the end of a run (the model replays each workload in virtual time, a second or more of CPU): `llmbench report` on this folder adds them, from the model in bench_result.json; `llmbench predict` asks it about any workload.'

/**
 * The report's "What if" section (issue 28): the fitted capacity model's parameters, how well it
 * reproduces the measured levels, and the knee it predicts for common workloads (docs/figures.md
 * "The capacity model"). Null when the result carries no model. Pure: the model runs in virtual time.
 * `workloads` empty: no knee is predicted (a run's own report, issue 40: the cost is in the
 * virtual-time replays, which nobody asked for yet) and a note says where to get them.
 */
export function whatIf(
  result: BenchResult,
  workloads: readonly Workload[] = COMMON_WORKLOADS,
): WhatIf | null {
  const model = result.model
  if (model === undefined) return null
  const predicted = workloads.length > 0
  const { rows, warnings } = predicted
    ? workloadRows(result, model, workloads)
    : { rows: [], warnings: [KNEES_NOT_PREDICTED] }
  const fit = fitRows(model)
  const maxError = model.reproduction.max_error
  const fitted = model.fitted_on
  const tables: WhatIfTable[] = [
    {
      title: 'Fitted parameters',
      head: ['parameter', 'value', '95% interval', 'measured or assumed', 'basis'],
      rows: parameterRows(model),
    },
    ...(fit.length === 0
      ? []
      : [
          {
            title: `The model on the measured levels (largest error ${((maxError ?? 0) * 100).toFixed(1)}%)`,
            head: ['concurrency', 'measured tok/s', 'model tok/s', 'error'],
            rows: fit,
          },
        ]),
    ...(predicted
      ? [
          {
            title: 'Predicted knee of other workloads',
            head: [
              'input / output tokens',
              'knee (range across the interval)',
              'tok/s at the knee (95%)',
              'note',
            ],
            rows: rows.map(workloadCells),
          },
        ]
      : []),
  ]
  return {
    intro:
      `A model of the server fitted on this run (${fitted.input_tokens} input / ${fitted.output_tokens} output tokens, ${levelsRun(result)}), ` +
      'run in virtual time on other workloads. Predictions, not measurements: each interval spans the model at both ends of its parameters’ intervals, widened by its largest error on the measured levels.' +
      (fit.length === 0 ? ' No closed-loop level was measured, so the model reproduces none.' : ''),
    tables,
    notes: [...new Set([...model.notes, ...warnings])],
  }
}
