import { ProxySettingError, proxyEnvOf, proxySecrets } from '../../client/proxy.js'
import { requestTimeoutMs } from '../../client/request-timeout.js'
import type { Endpoint } from '../../client/target.js'
import { ConfigError } from '../../config/errors.js'
import type { RunConfig } from '../../config/types.js'
import { joinUrl } from '../../config/url.js'
import { protocolOf } from '../../protocols/wire-protocol.js'
import { readApiKey, refuseUnsendableKey } from './api-key.js'
import { requestAuth } from './request-auth.js'

/** Seconds → ms: the only place the config's other timeouts change unit (the whole request's: requestTimeoutMs). */
const ms = (seconds: number): number => seconds * 1000

/**
 * The endpoint of `config` with `apiKey` (null = no key is sent), placed as config.target.auth says,
 * with the user's headers and those `env` holds (see requestAuth); an unsendable key is a ConfigError.
 */
export function resolveEndpoint(
  config: RunConfig,
  apiKey: string | null,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): Endpoint {
  const { target, client, workload } = config
  if (apiKey !== null) refuseUnsendableKey(target.api_key_env, apiKey)
  const auth = requestAuth(target, apiKey, env)
  for (const line of auth.notes) note(line)
  const joined = joinUrl(auth.baseUrl, target.endpoint)
  const url = new URL(joined)
  // Embeddings answer with one body: a run of them is never streamed, whatever --no-stream says.
  const stream = client.stream && protocolOf(target.protocol).streams
  const headers = { ...apiHeaders(stream ? 'text/event-stream' : 'application/json'), ...auth.headers }
  headers['content-type'] ??= 'application/json'
  const proxy = client.proxy ? proxiesOf(env) : null
  return {
    url: joined,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    modelsUrl: joinUrl(auth.baseUrl, '/v1/models'),
    headers,
    body: {
      model: target.model,
      endpoint: target.endpoint,
      stream,
      ignoreEos: workload.ignore_eos,
    },
    stream,
    protocol: target.protocol,
    timeoutMs: requestTimeoutMs(client),
    connectTimeoutMs: ms(Math.min(client.connect_timeout_s, client.timeout_s)),
    firstTokenTimeoutMs: client.first_token_timeout_s === null ? null : ms(client.first_token_timeout_s),
    idleTimeoutMs: ms(Math.min(client.idle_timeout_s, client.timeout_s)),
    secrets: [...auth.secrets, ...proxySecrets(proxy)],
    keepAlive: client.keepalive,
    apiKeyEnv: target.api_key_env,
    proxy,
  }
}

/** The environment's proxies; one that cannot be used is a configuration error naming its variable. */
function proxiesOf(env: NodeJS.ProcessEnv): ReturnType<typeof proxyEnvOf> {
  try {
    return proxyEnvOf(env)
  } catch (error) {
    if (!(error instanceof ProxySettingError)) throw error
    throw new ConfigError([
      { file: 'environment', path: error.variable, message: `${error.reason} (or --no-proxy to ignore it)` },
    ])
  }
}

/** The endpoint with the key read from the environment variable the config names (see readApiKey). */
export function endpointFromEnv(
  config: RunConfig,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): Endpoint {
  return resolveEndpoint(config, readApiKey(config, env, note), env, note)
}

/** Headers of every request llmbench sends: who we are and what we accept (the key: requestAuth). */
function apiHeaders(accept: string): Record<string, string> {
  // identity: a compressed event stream would arrive in bursts; a proxy that compresses anyway is decoded.
  return { accept, 'accept-encoding': 'identity', 'user-agent': 'llmbench' }
}
