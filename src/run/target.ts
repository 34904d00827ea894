import { Pool } from 'undici'
import type { Target } from '../client/stream-client.js'
import type { RunConfig } from '../config/types.js'
import { joinUrl } from '../config/url.js'
import { countTextTokens } from '../workload/tokenizer.js'

/** The API key, read only from the environment variable the config names; never stored elsewhere. */
export function readApiKey(config: RunConfig, env: NodeJS.ProcessEnv = process.env): string | null {
  const value = env[config.target.api_key_env]
  return value === undefined || value === '' ? null : value
}

/**
 * The target for one level: a keep-alive connection pool sized to the level, so every in-flight
 * request has its own connection and none waits for a socket (which would count as server time).
 */
export function createTarget(config: RunConfig, apiKey: string | null, connections: number): Target {
  const url = new URL(joinUrl(config.target.base_url, config.target.endpoint))
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: config.client.stream ? 'text/event-stream' : 'application/json',
    'user-agent': 'llmbench',
  }
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`
  const timeoutMs = config.client.timeout_s * 1000
  return {
    dispatcher: new Pool(url.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(timeoutMs, 30_000),
    }),
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    headers,
    stream: config.client.stream,
    timeoutMs,
    secrets: apiKey === null ? [] : [apiKey],
    countTokens: countTextTokens,
  }
}

export async function closeTarget(target: Target): Promise<void> {
  await target.dispatcher.destroy()
}
