import type { Endpoint } from '../client/endpoint.js'
import type { RunConfig } from '../config/types.js'
import { joinUrl } from '../config/url.js'
import { protocolStreams } from '../protocol.js'
import { readApiKey, refuseUnsendableKey } from './api-key.js'

/** Seconds → ms: the only place the config's timeouts change unit. */
const ms = (seconds: number): number => seconds * 1000

/** The endpoint of `config` with `apiKey` (null = no Authorization header); an unsendable key is a ConfigError. */
export function resolveEndpoint(config: RunConfig, apiKey: string | null): Endpoint {
  const { target, client, workload } = config
  if (apiKey !== null) refuseUnsendableKey(target.api_key_env, apiKey)
  const joined = joinUrl(target.base_url, target.endpoint)
  const url = new URL(joined)
  // Embeddings answer with one body: a run of them is never streamed, whatever --no-stream says.
  const stream = client.stream && protocolStreams(target.protocol)
  const headers = apiHeaders(apiKey, stream ? 'text/event-stream' : 'application/json')
  headers['content-type'] = 'application/json'
  return {
    url: joined,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    modelsUrl: joinUrl(target.base_url, '/v1/models'),
    headers,
    body: {
      model: target.model,
      endpoint: target.endpoint,
      protocol: target.protocol,
      stream,
      ignoreEos: workload.ignore_eos,
    },
    stream,
    protocol: target.protocol,
    timeoutMs: ms(client.timeout_s),
    connectTimeoutMs: ms(Math.min(client.connect_timeout_s, client.timeout_s)),
    firstTokenTimeoutMs: client.first_token_timeout_s === null ? null : ms(client.first_token_timeout_s),
    idleTimeoutMs: ms(Math.min(client.idle_timeout_s, client.timeout_s)),
    secrets: apiKey === null ? [] : [apiKey],
    keepAlive: client.keepalive,
    apiKeyEnv: target.api_key_env,
  }
}

/** The endpoint with the key read from the environment variable the config names (see readApiKey). */
export function endpointFromEnv(
  config: RunConfig,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): Endpoint {
  return resolveEndpoint(config, readApiKey(config, env, note))
}

/** Headers of every request llmbench sends: who we are, what we accept, and the key if there is one. */
function apiHeaders(apiKey: string | null, accept: string): Record<string, string> {
  // identity: a compressed event stream would arrive in bursts; a proxy that compresses anyway is decoded.
  const headers: Record<string, string> = { accept, 'accept-encoding': 'identity', 'user-agent': 'llmbench' }
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`
  return headers
}
