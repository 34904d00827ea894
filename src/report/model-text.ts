import type { CapacityModel, FittedParameter } from '../model/capacity-model.js'
import type { Predicted, Prediction } from '../model/predict.js'

/** The parameters in the order a reader follows a request: its slot, its prefill, its decode. */
const PARAMETER_NAMES: readonly [keyof CapacityModel['parameters'], string][] = [
  ['slots', 'slots'],
  ['prefill_base_ms', 'prefill, fixed (ms)'],
  ['prefill_ms_per_token', 'prefill per prompt token (ms)'],
  ['prefill_ms_per_token_sq', 'prefill per prompt token² (ms)'],
  ['decode_base_ms', 'decode step, empty batch (ms)'],
  ['decode_ms_per_seq', 'decode step per sequence (ms)'],
  ['decode_ms_per_context_token', 'decode step per context token (ms)'],
  ['prefill_blocks_decode', 'prefill stalls decoding'],
  ['kv_cache_tokens', 'KV cache (tokens)'],
]

/** "0.2018 (0.1954–0.2081)", or the value alone where there is no interval. */
export function fittedValue(parameter: FittedParameter): string {
  const value = formatNumber(parameter.value)
  if (parameter.low === null || parameter.high === null || parameter.low === parameter.high) return value
  return `${value} (${formatNumber(parameter.low)}–${formatNumber(parameter.high)})`
}

/** One row per parameter: name, value with its 95% interval, measured or assumed, and how it was found. */
export function modelRows(
  model: CapacityModel,
): { name: string; value: string; measured: boolean; basis: string }[] {
  return PARAMETER_NAMES.flatMap(([key, name]) => {
    const parameter = model.parameters[key]
    if (parameter == null) return []
    const value =
      key === 'prefill_blocks_decode' ? (parameter.value === 1 ? 'yes' : 'no') : fittedValue(parameter)
    return [{ name, value, measured: parameter.measured, basis: parameter.basis }]
  })
}

/** The model for the terminal: its parameters, how well it reproduced the run, its notes. */
export function renderModel(model: CapacityModel): string {
  const rows = modelRows(model)
  const width = Math.max(...rows.map((row) => row.name.length))
  const valueWidth = Math.max(...rows.map((row) => row.value.length))
  const lines = [
    `Capacity model (fitted on ${model.fitted_on.input_tokens}-token prompts, ${model.fitted_on.output_tokens} output tokens, levels ${model.fitted_on.levels.join(',')}; 95% intervals):`,
    ...rows.map(
      (row) =>
        `  ${row.name.padEnd(width)}  ${row.value.padEnd(valueWidth)}  ${row.measured ? 'measured' : 'ASSUMED '}  ${row.basis}`,
    ),
  ]
  const reproduced = model.reproduction
  if (reproduced.levels.length > 0) {
    lines.push('Reproducing the run (output tokens/s, measured → model):')
    for (const level of reproduced.levels)
      lines.push(
        `  ${String(level.level).padStart(4)}  ${level.measured_tokens_per_s.toFixed(1)} → ${level.predicted_tokens_per_s.toFixed(1)} (${signed(level.error)})`,
      )
  }
  for (const note of model.notes) lines.push(`note: ${note}`)
  return `${lines.join('\n')}\n`
}

/** A prediction for the terminal: a row per level, then the knee, the SLO capacity, replicas and warnings. */
export function renderPrediction(prediction: Prediction): string {
  const { input_tokens, output_tokens } = prediction.workload
  const header = [
    'level',
    'tok/s',
    'req/s',
    'TTFT p50 ms',
    'TTFT p95 ms',
    'TPOT p50 ms',
    'E2E p50 ms',
    'SLOs',
  ]
  const rows = prediction.levels.map((level) => [
    String(level.level),
    ranged(level.output_tokens_per_s),
    ranged(level.requests_per_s),
    ranged(level.ttft_ms.p50),
    ranged(level.ttft_ms.p95),
    ranged(level.tpot_ms.p50),
    ranged(level.e2e_ms.p50),
    level.meets_slos === null ? '–' : level.meets_slos ? 'met' : 'missed',
  ])
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] as string).length)),
  )
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number)))
      .join('  ')
  const outside = prediction.warnings.filter((warning) => warning.startsWith('outside the calibrated range'))
  const coverage = Math.round((prediction.coverage ?? 0.95) * 100)
  const lines = [
    // Said before the figures, not after them: a figure extrapolated is read differently.
    ...outside.map(
      (warning) => `OUTSIDE THE CALIBRATED RANGE: ${warning.replace(/^outside the calibrated range: /, '')}`,
    ),
    `Predicted for ${input_tokens}-token prompts and ${output_tokens} output tokens (point, then ${coverage}% prediction interval):`,
    line(header),
    ...rows.map(line),
    prediction.knee.text,
    ...(prediction.slo_capacity === null ? [] : [prediction.slo_capacity.text]),
    ...(prediction.replicas === null ? [] : [prediction.replicas.text]),
    `intervals: ${prediction.interval}`,
    ...prediction.warnings
      .filter((warning) => !outside.includes(warning))
      .map((warning) => `warning: ${warning}`),
  ]
  return `${lines.join('\n')}\n`
}

function ranged(figure: Predicted | undefined): string {
  if (figure === undefined) return '–'
  return `${formatNumber(figure.value)} (${formatNumber(figure.low)}–${formatNumber(figure.high)})`
}

function signed(fraction: number): string {
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)}%`
}

/** Four significant figures at most: enough for a fitted figure, no false precision. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  if (Number.isInteger(value)) return String(value)
  const magnitude = Math.floor(Math.log10(Math.abs(value)))
  const decimals = Math.max(0, Math.min(4, 3 - magnitude))
  return value.toFixed(decimals)
}
