import type { Protocol } from '../protocols/names.js'
import type { ConnectionWatch } from './connections.js'
import { H1Pool } from './h1/pool.js'
import type { Target } from './stream-client.js'

/**
 * Where and how every request of a run is sent, resolved once from the config and the key
 * (run/endpoint.ts): URLs
 * joined, headers (Authorization included) built, timeouts in ms. Everything that sends a request
 * (preflight, calibration, the clock offset, the model list, the worker threads) is handed this
 * value rather than the config and the key. A plain object: it crosses to the worker threads as is.
 */
export interface Endpoint {
  /** The endpoint's URL: base URL and endpoint path joined once. Shown only through displayUrl (it may hold a credential). */
  url: string
  /** scheme://host:port of `url`. */
  origin: string
  /** Path and query of `url`, e.g. /v1/chat/completions */
  path: string
  /** GET /v1/models on the same server: the model list and the clock offset. */
  modelsUrl: string
  /** Headers of a request to the endpoint, Authorization included. Travel in memory only, never logged. */
  headers: Record<string, string>
  /** What every request body carries besides the prompt and max_tokens. */
  body: { model: string; endpoint: string; protocol: Protocol; stream: boolean; ignoreEos: boolean }
  /** Ask for an event stream (and parse the response as one); never for embeddings. */
  stream: boolean
  /** The wire protocol: the body's shape and how responses are read. */
  protocol: Protocol
  /** Whole request. */
  timeoutMs: number
  /** TCP (and TLS) set-up; never longer than the whole request. */
  connectTimeoutMs: number
  /** Send to first token; null = only the whole-request timeout. */
  firstTokenTimeoutMs: number | null
  /** Longest silence between two reads of the response; never longer than the whole request. */
  idleTimeoutMs: number
  /** Strings to scrub from any stored or printed message: the key. */
  secrets: string[]
  /**
   * Reuse connections. False when the user said --no-keepalive, or (on the worker threads' copy) when
   * the probes before the run saw the server close connections right after responses.
   */
  keepAlive: boolean
  /** The environment variable the key comes from: errors name it, never the key. */
  apiKeyEnv: string
}

/** Headers of a GET to the server (the model list, the clock offset): the endpoint's, asking for JSON, no body. */
export function getHeaders(endpoint: Endpoint): Record<string, string> {
  const { 'content-type': _body, ...headers } = endpoint.headers
  return { ...headers, accept: 'application/json' }
}

/**
 * A keep-alive connection pool (the h1 client, client/h1/) sized to the streams it will carry, so every in-flight request has
 * its own connection and none waits for a socket (which would count as server time). `watch`
 * decides whether connections are reused at all (see client/connections.ts).
 */
export function openTarget(endpoint: Endpoint, connections: number, watch?: ConnectionWatch): Target {
  return {
    ...endpoint,
    connections: watch,
    dispatcher: new H1Pool(endpoint.origin, {
      connections,
      keepAliveTimeout: 30_000,
      connectTimeout: endpoint.connectTimeoutMs,
    }),
  }
}

export async function closeTarget(target: Target): Promise<void> {
  await target.dispatcher.destroy()
}
