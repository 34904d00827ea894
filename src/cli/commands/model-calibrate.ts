import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { ModelFile } from '../../model/model-file.js'
import { renderModel } from '../../report/model-text.js'
import { writeJsonAtomic } from '../../result/write-json.js'
import { numberFlag, type ParsedFlags, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

/** The default budget: under the issue's 3 minutes on the kit, with room for the fit and the file. */
export const DEFAULT_BUDGET_S = 150

/**
 * `llmbench model --calibrate --url URL`: the designed calibration against a live server
 * (run/calibration/calibrate-server.ts), its model file written, the model shown.
 */
export async function calibrateCommand(flags: ParsedFlags, io: Io): Promise<number> {
  const url = stringFlag(flags, 'url')
  if (url === undefined)
    throw new CliError('llmbench model --calibrate: give the server with --url URL', EXIT.usage)
  const budgetS = positive(flags, 'budget-s') ?? DEFAULT_BUDGET_S
  const context = positive(flags, 'context')
  const out = stringFlag(flags, 'out') ?? 'model.json'
  const folder = checkOut(out)
  const [{ loadConfigOrThrow }, { endpointFromEnv }, { fetchModels }, calibration] = await Promise.all([
    import('../load-config.js'),
    import('../../run/setup/resolve-endpoint.js'),
    import('../../run/setup/models.js'),
    import('../../run/calibration/calibrate-server.js'),
  ])
  const apiKeyEnv = stringFlag(flags, 'api-key-env')
  const note = (line: string) => io.err(`${line}\n`)
  const target = (model: string) =>
    endpointFromEnv(
      loadConfigOrThrow([], {
        base_url: url,
        model,
        ...(apiKeyEnv === undefined ? {} : { api_key_env: apiKeyEnv }),
      }),
      process.env,
      note,
    )
  let model = stringFlag(flags, 'model')
  if (model === undefined) {
    // The model is not needed to list models: a placeholder satisfies the config's final check.
    const listed = await fetchModels(target('-'))
    if ('error' in listed || listed.ids.length === 0)
      throw new CliError(
        `llmbench model --calibrate: give --model ID (the server's /v1/models ${'error' in listed ? `failed: ${listed.error}` : 'lists none'})`,
        EXIT.usage,
      )
    model = listed.ids[0] as string
  }
  let file: ModelFile
  try {
    file = await calibration.calibrateServer({
      endpoint: target(model),
      budgetS,
      contextPerSlot: context ?? null,
      log: note,
    })
  } catch (error) {
    if (error instanceof calibration.CalibrationRefused)
      throw new CliError(`llmbench model --calibrate: ${error.message}`, EXIT.usage)
    throw error
  }
  mkdirSync(folder, { recursive: true })
  writeJsonAtomic(out, file)
  io.out(flags.json === true ? `${JSON.stringify(file, null, 2)}\n` : renderModel(file.model))
  io.err(
    `Wrote ${out} (the calibrated model: predict from it with \`llmbench predict --model-file ${out}\`)\n`,
  )
  return EXIT.ok
}

/**
 * The model file's folder checked before the budget is spent: a calibration is minutes of a
 * server's time, and a path that cannot be written must not lose it at the end. The folder itself
 * is made only when the file is written (as `run --out` makes its folder), so a refused calibration
 * leaves nothing behind. Returns the folder.
 */
function checkOut(out: string): string {
  const folder = dirname(resolve(out))
  let existing = folder
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing)
  let reason: string | null = null
  try {
    if (!statSync(existing).isDirectory()) reason = 'ENOTDIR'
    else accessSync(existing, constants.W_OK)
  } catch (error) {
    reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
  }
  if (reason !== null)
    throw new CliError(
      `llmbench model --calibrate: --out ${out}: ${existing} cannot be written (${reason}); give another --out`,
      EXIT.usage,
    )
  return folder
}

function positive(flags: ParsedFlags, name: string): number | undefined {
  const value = numberFlag(flags, name)
  if (value === undefined) return undefined
  if (!(value > 0) || !Number.isFinite(value))
    throw new CliError(
      `llmbench model: --${name} must be a number > 0, got ${JSON.stringify(stringFlag(flags, name))}`,
      EXIT.usage,
    )
  return value
}
