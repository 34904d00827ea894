import { type Diagnosis, explainFailure } from '../../records/failure-cause.js'
import type { RequestRecord } from '../../records/types.js'

export type { Diagnosis }

/**
 * Tells apart why a check or preflight request failed (see explainFailure), with the run's model,
 * key variable and the server's model list (when it could be fetched) in the hint.
 */
export function diagnose(
  record: RequestRecord,
  model: string,
  keyVariable: string,
  models: string[] | null,
  /** What the protocol in use answers with, in words. */
  format: string,
): Diagnosis | null {
  return explainFailure(record, { model, keyVariable, models, format })
}
