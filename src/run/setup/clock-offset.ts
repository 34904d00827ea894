import { proxyAgentFor } from '../../client/proxy-agent.js'
import { type Endpoint, getHeaders } from '../../client/target.js'

/**
 * This host's clock against the server's, from the Date header of GET /v1/models: server time minus
 * the local midpoint of the exchange, ms. Date has one-second resolution, so this catches a shard
 * whose clock is badly off (its levels would not overlap the others'), not milliseconds; NTP on the
 * load generators is what keeps them together. Null when there is no Date header or no answer.
 */
export async function estimateClockOffsetMs(
  endpoint: Endpoint,
  interrupt?: AbortSignal,
): Promise<number | null> {
  let proxy: Awaited<ReturnType<typeof proxyAgentFor>> = null
  try {
    const { request } = await import('undici')
    proxy = await proxyAgentFor(endpoint.modelsUrl, endpoint.proxy)
    const before = Date.now()
    const response = await request(endpoint.modelsUrl, {
      ...(proxy === null ? {} : { dispatcher: proxy }),
      headers: getHeaders(endpoint),
      headersTimeout: 5_000,
      bodyTimeout: 5_000,
      ...(interrupt === undefined ? {} : { signal: interrupt }),
    })
    const after = Date.now()
    await response.body.dump()
    const date = response.headers.date
    const serverMs = typeof date === 'string' ? Date.parse(date) : Number.NaN
    if (Number.isNaN(serverMs)) return null
    // The header is truncated to the second: its true time is on average half a second later.
    return Math.round(serverMs + 500 - (before + after) / 2)
  } catch {
    return null
  } finally {
    proxy?.destroy().catch(() => {})
  }
}
