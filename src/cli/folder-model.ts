import type { CapacityModel } from '../model/capacity-model.js'
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
  return { result, model: result.model }
}
