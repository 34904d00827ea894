import { ConfigError } from '../config/errors.js'
import { loadRunConfig } from '../config/load.js'
import type { ConfigFlags, RunConfig } from '../config/types.js'
import { CliError, EXIT } from './exit-codes.js'

/** The run config of the files and flags; a configuration mistake is a usage error (exit 2). */
export function loadConfigOrThrow(configFiles: string[], flags: ConfigFlags): RunConfig {
  try {
    return loadRunConfig({ configFiles, flags })
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, EXIT.usage)
    throw error
  }
}
