import { ConfigError } from '../../config/errors.js'
import { readStoredKey } from '../../config/stored-key.js'
import type { RunConfig } from '../../config/types.js'

/**
 * The API key, read only from the environment variable the config names; never stored elsewhere.
 * Whitespace around it is trimmed and said once through `note` (a Kubernetes Secret made from an
 * `echo`-written file, or a CRLF .env, ends the key with a newline, which no header can carry). A
 * key that still holds a control character or one outside Latin-1 is a configuration error naming
 * the variable and the position, never the key, before anything is sent.
 */
export function readApiKey(
  config: RunConfig,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): string | null {
  const stored = config.target.api_key_file
  if (stored !== null) return keyFromFile(stored)
  return readKeyVariable(config.target.api_key_env, env, note)
}

/** The key in the environment variable `name` (the run's, or an endpoint's own): trimmed, refused if unsendable. */
export function readKeyVariable(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): string | null {
  const raw = env[name]
  if (raw === undefined) return null
  const value = raw.trim()
  if (value === '') return null
  if (value !== raw)
    note(
      `note: $${name} has whitespace around the key (a trailing newline from a file or a CRLF .env?): trimmed`,
    )
  refuseUnsendableKey(name, value)
  return value
}

/**
 * A key no header can carry is a configuration error naming the variable and the position, never
 * the key. Checked again where the endpoint is resolved, for keys that do not come from readApiKey
 * (library callers): undici would refuse the first request and leave the rest of its pool waiting
 * out the whole timeout, recorded as server timeouts.
 */
export function refuseUnsendableKey(name: string, value: string, where?: KeyFile): void {
  const at = unsendableAt(value)
  if (at < 0) return
  const what = value.charCodeAt(at) <= 0xff ? 'a control character' : 'a character outside Latin-1'
  throw new ConfigError([
    {
      file: where === undefined ? `$${name}` : where.file,
      path: where === undefined ? '' : where.path.join('.'),
      message: `the API key holds ${what} at position ${at + 1} of ${value.length}, which an HTTP header cannot carry: fix the ${where === undefined ? "variable's" : "file's"} value`,
    },
  ])
}

type KeyFile = NonNullable<RunConfig['target']['api_key_file']>

/**
 * The key another tool's config file holds (a Claude Code settings.json's env.ANTHROPIC_AUTH_TOKEN),
 * read again when the endpoint is resolved so it never enters the config; that tool gives the
 * file's value precedence over the shell's variable, and so does llmbench.
 */
function keyFromFile(where: KeyFile): string | null {
  const value = readStoredKey(where.file, where.path)
  if (typeof value === 'string') {
    refuseUnsendableKey('', value.trim(), where)
    return value.trim() === '' ? null : value.trim()
  }
  throw new ConfigError([
    {
      file: where.file,
      path: where.path.join('.'),
      message: 'expected the API key the file held when it was loaded, got none',
    },
  ])
}

/** The first character an HTTP header value cannot carry (a control character, or beyond Latin-1); -1 if none. */
function unsendableAt(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7f || code > 0xff) return i
  }
  return -1
}
