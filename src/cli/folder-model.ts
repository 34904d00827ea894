import type { CapacityModel } from '../model/capacity-model.js'
import { modelProblems, unmeasuredBasis } from '../model/model-check.js'
import type { BenchResult } from '../result/bench-result.js'
import { buildResult } from '../result/build-result.js'
import { loadRun } from '../result/load-run.js'
import { CliError, EXIT } from './exit-codes.js'

/**
 * A result folder's capacity model: fitted anew from its records where it has them (so a folder of an
 * older version gets one), else the one its bench_result.json carries. A usage error naming the folder
 * when it has none (embeddings, no level ran).
 */
export function folderModel(command: string, path: string): { result: BenchResult; model: CapacityModel } {
  let run: ReturnType<typeof loadRun>
  try {
    run = loadRun(path, 'skip')
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT.usage)
  }
  const result =
    run.records === null ? run.result : buildResult(run.records, run.result.meta, run.serverScrapes)
  if (result.model === undefined)
    throw new CliError(
      `llmbench ${command}: ${run.dir} has no capacity model: it needs a run that generated tokens at one level at least ` +
        '(an embeddings run, or one cut before its first level, has none)',
      EXIT.usage,
    )
  const problems = modelProblems(result.model)
  if (problems.length > 0)
    throw new CliError(
      `llmbench ${command}: ${run.dir}: its capacity model cannot be used:\n  ${problems.join('\n  ')}`,
      EXIT.usage,
    )
  const unmeasured = unmeasuredBasis(result.model)
  if (unmeasured !== null)
    throw new CliError(
      `llmbench ${command}: ${run.dir}: no capacity model to show or predict from: ${unmeasured}; ` +
        'run a gradient whose requests succeed first',
      EXIT.usage,
    )
  return { result, model: result.model }
}
