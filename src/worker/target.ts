import { Pool } from 'undici'
import type { ConnectionWatch } from '../client/connections.js'
import type { Target } from '../client/stream-client.js'
import { ConfigError } from '../config/errors.js'
import type { RunConfig } from '../config/types.js'
import { joinUrl } from '../config/url.js'
import type { TargetSpec } from './protocol.js'

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
  const name = config.target.api_key_env
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
 * the key. Checked again where the headers are made, for keys that do not come from readApiKey
 * (library callers): undici would refuse the first request and leave the rest of its pool waiting
 * out the whole timeout, recorded as server timeouts.
 */
function refuseUnsendableKey(name: string, value: string): void {
  const at = unsendableAt(value)
  if (at < 0) return
  const what = value.charCodeAt(at) <= 0xff ? 'a control character' : 'a character outside Latin-1'
  throw new ConfigError([
    {
      file: `$${name}`,
      path: '',
      message: `the API key holds ${what} at position ${at + 1} of ${value.length}, which an HTTP header cannot carry: fix the variable's value`,
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

/** Headers of every request llmbench sends: who we are, what we accept, and the key if there is one. */
export function apiHeaders(apiKey: string | null, accept: string): Record<string, string> {
  // identity: a compressed event stream would arrive in bursts; a proxy that compresses anyway is decoded.
  const headers: Record<string, string> = { accept, 'accept-encoding': 'identity', 'user-agent': 'llmbench' }
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`
  return headers
}

/** What every request of a run shares: URL, headers (key included), streaming, timeout. */
export function targetSpec(config: RunConfig, apiKey: string | null): TargetSpec {
  if (apiKey !== null) refuseUnsendableKey(config.target.api_key_env, apiKey)
  const url = new URL(joinUrl(config.target.base_url, config.target.endpoint))
  const headers = apiHeaders(apiKey, config.client.stream ? 'text/event-stream' : 'application/json')
  headers['content-type'] = 'application/json'
  return {
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    headers,
    stream: config.client.stream,
    timeoutMs: config.client.timeout_s * 1000,
    connectTimeoutMs: Math.min(config.client.connect_timeout_s, config.client.timeout_s) * 1000,
    firstTokenTimeoutMs:
      config.client.first_token_timeout_s === null ? null : config.client.first_token_timeout_s * 1000,
    idleTimeoutMs: Math.min(config.client.idle_timeout_s, config.client.timeout_s) * 1000,
    secrets: apiKey === null ? [] : [apiKey],
    keepAlive: config.client.keepalive,
  }
}

/**
 * A keep-alive connection pool sized to the streams it will carry, so every in-flight request has
 * its own connection and none waits for a socket (which would count as server time). `watch`
 * decides whether connections are reused at all (see client/connections.ts).
 */
export function openTarget(spec: TargetSpec, connections: number, watch?: ConnectionWatch): Target {
  return {
    ...spec,
    connections: watch,
    dispatcher: new Pool(spec.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connectTimeout: spec.connectTimeoutMs,
    }),
  }
}

export async function closeTarget(target: Target): Promise<void> {
  await target.dispatcher.destroy()
}
