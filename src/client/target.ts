import type { Protocol } from '../protocols/names.js'
import type { ConnectionWatch } from './connections.js'
import { H1Pool } from './h1/pool.js'
import { type ProxyEnv, proxyFor } from './proxy.js'
import type { StreamDispatcher } from './stream-dispatcher.js'

/**
 * Where requests go: the Endpoint, a plain value resolved once per run, and the Target, an endpoint
 * opened for sending with its connection pool.
 */

/**
 * Where and how every request of a run is sent, resolved once from the config and the key
 * (run/setup/resolve-endpoint.ts): URLs joined, headers (Authorization included) built, timeouts in ms.
 * Everything that sends a request (preflight, calibration, the clock offset, the model list, the
 * worker threads) is handed this value rather than the config and the key. A plain object: it
 * crosses to the worker threads as is.
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
  /** What every request body carries besides the prompt, max_tokens and the protocol (bodyOptionsOf adds it). */
  body: { model: string; endpoint: string; stream: boolean; ignoreEos: boolean }
  /** Ask for an event stream (and parse the response as one); never for a protocol that does not stream. */
  stream: boolean
  /** The wire protocol: the body's shape and how responses are read (protocols/wire-protocol.ts). */
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
  /**
   * The proxies of the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY); null when none is set or
   * --no-proxy. Every request, whichever client sends it, asks proxyFor (client/proxy.ts) for its route.
   */
  proxy: ProxyEnv | null
}

/**
 * An endpoint opened for sending (openTarget): the endpoint's fields that every request reads, with
 * the connection pool that carries them and what one caller adds. Without a protocol, responses are
 * read as chat completions; connectTimeoutMs bounds the one-off connection a resend opens.
 */
export interface Target
  extends Pick<
      Endpoint,
      | 'origin'
      | 'path'
      | 'headers'
      | 'stream'
      | 'timeoutMs'
      | 'firstTokenTimeoutMs'
      | 'idleTimeoutMs'
      | 'secrets'
    >,
    Partial<Pick<Endpoint, 'protocol' | 'connectTimeoutMs'>> {
  /** The h1 client's pool (openTarget), or an undici Pool. */
  dispatcher: StreamDispatcher
  /** Called with each token-bearing chunk's text as it arrives (`llmbench check` prints them). */
  onText?: ((text: string) => void) | undefined
  /** Aborted when a Ctrl-C's grace period ends: in-flight requests are then cut and recorded. */
  interrupt?: AbortSignal | undefined
  /** The thread's keep-alive policy and connection counts; absent = keep-alive, counts unread. */
  connections?: ConnectionWatch | undefined
}

/** What every request body of the run is built from: the endpoint's body with its protocol. */
export function bodyOptionsOf(
  endpoint: Pick<Endpoint, 'body' | 'protocol'>,
): Endpoint['body'] & { protocol: Protocol } {
  return { ...endpoint.body, protocol: endpoint.protocol }
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
      proxy: proxyFor(endpoint.origin, endpoint.proxy),
    }),
  }
}

export async function closeTarget(target: Target): Promise<void> {
  await target.dispatcher.destroy()
}
