import type { CalibrationPoint } from './calibration-design.js'
import type { CapacityModel } from './capacity-model.js'
import { modelProblems, unmeasuredBasis } from './model-check.js'
import type { SpeedCheck } from './speed-check.js'

/**
 * The file `llmbench model --calibrate` writes and `predict --model-file` reads: the calibrated
 * capacity model (every parameter with its interval, source and basis; its range of validity; its
 * prediction interval), the server it describes and what the calibration spent.
 */
export const MODEL_FILE_FORMAT = 'llmbench.model/1'

export interface ModelFile {
  format: typeof MODEL_FILE_FORMAT
  /** When the calibration ended, ISO 8601. */
  calibrated_at: string
  server: {
    /** The base URL, credentials removed. */
    base_url: string
    model: string
    engine: string | null
    context_per_slot: number
    context_source: 'server' | 'flag'
  }
  calibration: {
    budget_s: number
    spent_s: number
    /** The design in words: repeats, waves, output tokens. */
    design: string
    points: PlannedPoint[]
    /**
     * The batch-1 decode point measured again at the end (speed-check.ts): how far the machine's
     * own speed moved; null when it was not repeated; absent in older files.
     */
    speed_check?: SpeedCheck | null
  }
  model: CapacityModel
}

/** A planned point and what became of it. */
export interface PlannedPoint extends CalibrationPoint {
  /** ran; skipped: the budget left could not hold it; cut: the budget ended while it ran. */
  outcome: 'ran' | 'skipped' | 'cut'
  ok: number
  failed: number
  took_s: number
}

/**
 * A model file's calibrated model, or the problems that keep it from being used, each naming the
 * key: a file a person may have edited is checked as a result's model is (model-check.ts).
 */
export function readModelFile(
  json: unknown,
): { model: CapacityModel; file: ModelFile } | { problems: string[] } {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { problems: ['expected a JSON object (a model file written by `llmbench model --calibrate`)'] }
  const file = json as Partial<ModelFile>
  if (file.format !== MODEL_FILE_FORMAT)
    return {
      problems: [`format: expected "${MODEL_FILE_FORMAT}", got ${JSON.stringify(file.format ?? null)}`],
    }
  const model = file.model
  if (typeof model !== 'object' || model === null) return { problems: ['model: expected an object'] }
  const problems = modelProblems(model).map((problem) => `model.${problem}`)
  if (typeof model.fitted_on !== 'object' || model.fitted_on === null)
    problems.push('model.fitted_on: expected an object')
  const interval = model.interval
  if (interval !== undefined)
    for (const [key, value] of Object.entries(interval.relative_error ?? {}))
      if (!(typeof value === 'number' && value >= 0 && value < 100))
        problems.push(
          `model.interval.relative_error.${key}: expected a number from 0 to 100, got ${JSON.stringify(value)}`,
        )
  if (problems.length > 0) return { problems }
  const unmeasured = unmeasuredBasis(model)
  if (unmeasured !== null) return { problems: [`model: ${unmeasured}`] }
  return {
    model: {
      ...model,
      reproduction: model.reproduction ?? { levels: [], max_error: null },
      notes: model.notes ?? [],
    },
    file: file as ModelFile,
  }
}
