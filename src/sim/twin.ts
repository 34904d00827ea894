import type { CapacityModel, FittedParameter } from '../model/capacity-model.js'
import { engineParams } from '../model/capacity-model.js'
import { resolveSimParams, type SimParams } from '../model/engine.js'
import { modelProblems, unmeasuredBasis } from '../model/model-check.js'
import { buildResult } from '../result/build-result.js'
import { RECORDS_FILE, RESULT_FILE } from '../result/folder-layout.js'
import { loadRun } from '../result/load-run.js'

/**
 * The simulator as the twin of a measured server (`llmbench sim --from DIR`): the capacity model fitted
 * on the run in DIR (model/fit.ts), as the engine's parameters, serving the model id the run asked for.
 */
export interface SimTwin {
  /** The result folder. */
  dir: string
  model: CapacityModel
  /** Where the model came from: the saved summary, or fitted again from the records (an older result). */
  from: 'summary' | 'records'
  /** The model id the run asked for. */
  modelId: string
  /** The server sent llama.cpp's timings (prompt_ms, ...): the twin sends them too. */
  timings: boolean
}

/** A folder the twin cannot be made from: the message names it and says why. */
export class TwinError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TwinError'
  }
}

/** The twin of the run in `path` (a result folder or its bench_result.json); throws TwinError. */
export function loadTwin(path: string): SimTwin {
  let run: ReturnType<typeof loadRun>
  try {
    run = loadRun(path)
  } catch (error) {
    throw new TwinError(error instanceof Error ? error.message : String(error))
  }
  const saved = run.result.model
  const model =
    saved ??
    (run.records === null ? undefined : buildResult(run.records, run.result.meta, run.serverScrapes).model)
  if (model === undefined) {
    const why =
      run.records === null
        ? `its ${RESULT_FILE} carries no capacity model (an older llmbench wrote it) and there is no ${RECORDS_FILE} to fit one from`
        : 'no capacity model could be fitted from its records (no level ran, or the endpoint generates no tokens)'
    throw new TwinError(`${run.dir}: ${why}`)
  }
  const problems = modelProblems(model)
  if (problems.length > 0)
    throw new TwinError(`${run.dir}: its capacity model cannot be served:\n  ${problems.join('\n  ')}`)
  const unmeasured = unmeasuredBasis(model)
  if (unmeasured !== null) throw new TwinError(`${run.dir}: no capacity model to serve: ${unmeasured}`)
  const timedRecords = (run.records ?? []).some((record) => record.server_timings?.prompt_ms != null)
  const timedBasis = [model.parameters.prefill_base_ms, model.parameters.prefill_ms_per_token].some((p) =>
    p.basis.includes('prompt_ms'),
  )
  return {
    dir: run.dir,
    model,
    from: saved === undefined ? 'records' : 'summary',
    modelId: run.result.meta.target.model,
    timings: timedRecords || timedBasis,
  }
}

/** The engine parameters a twin serves, in the order they are told. */
const TWIN_KEYS = [
  'slots',
  'prefill_base_ms',
  'prefill_ms_per_token',
  'decode_base_ms',
  'decode_ms_per_seq',
  'prefill_ms_per_token_sq',
  'decode_ms_per_context_token',
  'prefill_blocks_decode',
  'kv_cache_tokens',
] as const satisfies readonly (keyof SimParams)[]

/**
 * The twin's engine parameters: the fitted model's point values, each explicit override (a what-if:
 * another slot count, say) in its place; with one line per parameter saying its value and where it
 * came from (fitted, overridden, or assumed for want of evidence, and what was assumed).
 */
export function twinParams(
  twin: SimTwin,
  overrides: Partial<SimParams>,
): { params: SimParams; lines: string[] } {
  const fitted = engineParams(twin.model.parameters)
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined))
  const params = resolveSimParams({ ...fitted, ...defined })
  const lines = TWIN_KEYS.map((key) => {
    const value = params[key]
    const shown = Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)))
    return `  ${key} ${shown}: ${origin(key, overrides, twin.model.parameters[key])}`
  })
  return { params, lines }
}

function origin(
  key: string,
  overrides: Partial<SimParams>,
  parameter: FittedParameter | null | undefined,
): string {
  if (overrides[key as keyof SimParams] !== undefined) return `overridden by --${key.replaceAll('_', '-')}`
  if (parameter == null) return 'the simulator’s default (the run did not say)'
  return `${parameter.measured ? 'fitted' : 'ASSUMED, not measured'} (${parameter.basis})`
}
