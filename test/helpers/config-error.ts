import assert from 'node:assert/strict'
import { ConfigError } from '../../src/config/errors.js'
import { loadRunConfig } from '../../src/config/load.js'
import type { ConfigFlags } from '../../src/config/types.js'

/** The message of the ConfigError loading these files and flags throws; fails the test when none is thrown. */
export function configErrorMessage(configFiles: string[], flags: ConfigFlags = {}): string {
  try {
    loadRunConfig({ configFiles, flags })
  } catch (error) {
    if (error instanceof ConfigError) return error.message
    throw error
  }
  assert.fail('expected a ConfigError')
}
