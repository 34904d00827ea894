import type { CapacityModel, FittedParameter } from './capacity-model.js'

/**
 * Whether a capacity model can be run: a model read from a folder is a file a person may have edited
 * (or a run that measured nothing), and the engine given NaN, a negative cost or 1e308 printed
 * "Infinity tok/s" tables and served requests that never ended (issue 36). Pure: the problems in
 * words, none when the model is fit to predict from.
 */

/** The largest value each parameter may take: far past any real server, short of overflowing a timer. */
const LIMITS: Record<string, number> = {
  slots: 100_000,
  prefill_base_ms: 600_000,
  prefill_ms_per_token: 60_000,
  decode_base_ms: 600_000,
  decode_ms_per_seq: 60_000,
  prefill_ms_per_token_sq: 1_000,
  decode_ms_per_context_token: 1_000,
  prefill_blocks_decode: 1,
  kv_cache_tokens: 1e10,
}

/** Parameters older results (and fits that could not test them) do not have. */
const OPTIONAL = new Set(['prefill_ms_per_token_sq', 'decode_ms_per_context_token'])

export function modelProblems(model: CapacityModel): string[] {
  const parameters = (model as { parameters?: unknown }).parameters
  if (typeof parameters !== 'object' || parameters === null) return ['it has no parameters']
  const problems: string[] = []
  for (const [name, limit] of Object.entries(LIMITS)) {
    const parameter = (parameters as Record<string, FittedParameter | null | undefined>)[name]
    if (parameter === null && name === 'kv_cache_tokens') continue
    if (parameter === undefined && OPTIONAL.has(name)) continue
    const problem = parameterProblem(parameter, name === 'slots' ? 1 : 0, limit)
    if (problem !== null) problems.push(`parameters.${name}: ${problem}`)
  }
  return problems
}

function parameterProblem(
  parameter: FittedParameter | null | undefined,
  min: number,
  max: number,
): string | null {
  if (typeof parameter !== 'object' || parameter === null) return 'missing'
  const range = `a number from ${min} to ${max}`
  if (!inRange(parameter.value, min, max)) return `value ${show(parameter.value)}: expected ${range}`
  for (const end of ['low', 'high'] as const) {
    const value = parameter[end]
    if (value !== null && value !== undefined && !inRange(value, 0, max))
      return `${end} ${show(value)}: expected null or ${range}`
  }
  return null
}

function inRange(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * What the model would predict from without having measured it; null when nothing. A decode step
 * never seen (every request failed, or the only level was cut before a token) was assumed 0, and a
 * prediction from it gave 1805 tok/s against 162.6 measured.
 */
export function unmeasuredBasis(model: CapacityModel): string | null {
  const decode = model.parameters.decode_base_ms
  if (!decode.measured && decode.value === 0)
    return 'the decode step was never measured (no request streamed tokens that could be timed)'
  return null
}
