import { autoReason, placeAuth } from '../../config/auth-mode.js'
import { isSecretHeaderName, publicHeaders } from '../../config/headers.js'
import type { RunConfig } from '../../config/types.js'
import { ANTHROPIC_VERSION, protocolOf } from '../../protocols/wire-protocol.js'

const KEY_HEADER = { bearer: 'Authorization', 'api-key': 'api-key', 'x-api-key': 'x-api-key' } as const

/** How every request of a run authenticates: its headers, the base URL without credentials, the secrets to scrub. */
export interface RequestAuth {
  /** Key, Basic credentials, version header and the user's headers; the caller adds accept and content-type. */
  headers: Record<string, string>
  /** base_url with user:password@ taken out (they travel as Authorization: Basic instead). */
  baseUrl: string
  /** Every value here that is a credential, for redact(): never printed, never written. */
  secrets: string[]
  /** Said once before the run: a key that is not sent, a header variable that is not set. */
  notes: string[]
}

/**
 * Places the key as the target wants it (docs/configuration.md "Headers and auth"): Authorization:
 * Bearer, Azure's api-key, or Anthropic's x-api-key (with anthropic-version); Basic from user:password@
 * in the base URL; then the user's headers and those read from the environment, which win over
 * anything computed here (the user said so).
 */
export function requestAuth(
  target: RunConfig['target'],
  apiKey: string | null,
  env: NodeJS.ProcessEnv,
): RequestAuth {
  const { url: baseUrl, basic } = takeCredentials(target.base_url)
  const key = keyHeaders(target, apiKey, basic)
  const extra = extraHeaders(target, env)
  const secrets = [...key.secrets, ...extra.secrets].filter((secret) => secret.length > 0)
  return {
    headers: { ...key.headers, ...extra.headers },
    baseUrl,
    secrets: [...new Set(secrets)],
    notes: [...key.notes, ...extra.notes],
  }
}

type HeaderPart = Pick<RequestAuth, 'headers' | 'secrets' | 'notes'>
type Basic = { encoded: string; secrets: string[] } | null

/** The key where `auth` places it, Basic from the URL, and the version header the Messages API requires. */
function keyHeaders(target: RunConfig['target'], apiKey: string | null, basic: Basic): HeaderPart {
  const headers: Record<string, string> = {}
  const secrets: string[] = []
  const notes: string[] = []
  const placed = placeAuth(target.auth, target.protocol, target.base_url)
  if (basic !== null) {
    headers.authorization = `Basic ${basic.encoded}`
    secrets.push(...basic.secrets)
  }
  if (apiKey !== null && placed !== 'none') {
    secrets.push(apiKey)
    if (placed === 'api-key') headers['api-key'] = apiKey
    else if (placed === 'x-api-key') headers['x-api-key'] = apiKey
    else if (basic === null) headers.authorization = `Bearer ${apiKey}`
    else
      notes.push(
        "note: the base URL's user:password@ is sent as Basic authorization; the key is not sent (--auth api-key or x-api-key sends both)",
      )
    if (target.auth === 'auto' && placed !== 'bearer')
      notes.push(
        `note: sending the key as ${KEY_HEADER[placed]} (${autoReason(target.protocol, target.base_url)}); --auth bearer sends it as a bearer token`,
      )
  }
  if (apiKey === null && placed !== 'none' && basic === null && target.headers.authorization === undefined)
    notes.push(
      target.api_key_file === null
        ? `note: $${target.api_key_env} is not set: sending no ${KEY_HEADER[placed]} header`
        : `note: ${target.api_key_file.file} holds no key at ${target.api_key_file.path.join('.')}: sending no ${KEY_HEADER[placed]} header`,
    )
  // Anthropic's key header comes with its version header, whatever the protocol.
  if (placed === 'x-api-key') headers['anthropic-version'] = ANTHROPIC_VERSION
  Object.assign(headers, protocolOf(target.protocol).headers)
  return { headers, secrets, notes }
}

/**
 * The user's headers and those read from the environment: they win over the computed ones (the
 * user said so). Values of secret-looking names, and every value from the environment, are secrets.
 */
function extraHeaders(target: RunConfig['target'], env: NodeJS.ProcessEnv): HeaderPart {
  const headers: Record<string, string> = {}
  const secrets: string[] = []
  const notes: string[] = []
  for (const [name, variable] of Object.entries(target.env_headers)) {
    const value = env[variable]?.trim()
    if (value === undefined || value === '') {
      notes.push(`note: $${variable} is not set: sending no ${name} header`)
      continue
    }
    headers[name] = value
    // A value kept in the environment rather than the file is treated as the secret it likely is.
    secrets.push(value)
  }
  for (const [name, value] of Object.entries(target.headers)) {
    headers[name] = value
    if (isSecretHeaderName(name)) secrets.push(...secretParts(value))
  }
  const shown = { ...publicHeaders(target.headers), ...redactedAll(target.env_headers, headers) }
  if (Object.keys(shown).length > 0)
    notes.push(
      `headers: ${Object.entries(shown)
        .map(([name, value]) => `${name}: ${value}`)
        .join(', ')}`,
    )
  return { headers, secrets, notes }
}

/** Headers read from the environment, as shown: the value never, only whether it was set. */
function redactedAll(fromEnv: Record<string, string>, sent: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {}
  for (const [name, variable] of Object.entries(fromEnv))
    if (sent[name] !== undefined) shown[name] = `[from $${variable}]`
  return shown
}

/** The URL without user:password@, and the Basic credentials they make (with every form of the secret). */
function takeCredentials(baseUrl: string): { url: string; basic: Basic } {
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    return { url: baseUrl, basic: null }
  }
  if (parsed.username === '' && parsed.password === '') return { url: baseUrl, basic: null }
  const password = decodeURIComponent(parsed.password)
  const encoded = Buffer.from(`${decodeURIComponent(parsed.username)}:${password}`).toString('base64')
  const rawPassword = parsed.password
  parsed.username = ''
  parsed.password = ''
  const url = parsed.toString().replace(/\/(\?|$)/, '$1')
  // The URL as written, without its credentials: the path and query stay exactly as given.
  return { url, basic: { encoded, secrets: [encoded, password, rawPassword] } }
}

/** A secret header's value and, for "Bearer X" or "Basic X", the credential alone (servers echo either). */
function secretParts(value: string): string[] {
  const scheme = /^(?:bearer|basic|token)\s+(.+)$/i.exec(value)
  return scheme?.[1] === undefined ? [value] : [value, scheme[1]]
}
