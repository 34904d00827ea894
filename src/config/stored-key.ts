import { extname } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { readTextFile } from '../text-file.js'
import { parseJsonc } from './jsonc.js'

/**
 * The value at `path` in a settings.json or config.toml, read when a run needs the key that file
 * holds (see RunConfig.target.api_key_file); undefined when the file or the value is gone. Never
 * cached and never returned anywhere but to the request headers.
 */
export function readStoredKey(file: string, path: readonly string[]): unknown {
  let document: unknown
  try {
    const text = readTextFile(file)
    if (extname(file).toLowerCase() === '.toml') document = parseToml(text)
    else {
      const parsed = parseJsonc(text)
      document = parsed.ok ? parsed.value : undefined
    }
  } catch {
    return undefined
  }
  let current = document
  for (const part of path) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<string, unknown>)[part]
  }
  return current
}
