import { proxyFor } from '../../client/proxy.js'
import { proxyAgentFor } from '../../client/proxy-agent.js'
import { redact } from '../../client/redact.js'
import { type Endpoint, getHeaders } from '../../client/target.js'

/** GET /v1/models: the served model ids, or an error message (redacted) when the list cannot be had. */
export async function fetchModels(
  endpoint: Endpoint,
  timeoutMs = 10_000,
): Promise<{ ids: string[] } | { error: string; status: number | null }> {
  const { secrets } = endpoint
  let proxy: Awaited<ReturnType<typeof proxyAgentFor>> = null
  try {
    // undici loads with the first of these reads, not with every command that imports this module.
    const { request } = await import('undici')
    proxy = await proxyAgentFor(endpoint.modelsUrl, endpoint.proxy)
    const response = await request(endpoint.modelsUrl, {
      ...(proxy === null ? {} : { dispatcher: proxy }),
      headers: getHeaders(endpoint),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    })
    const text = await response.body.text()
    if (response.statusCode !== 200) {
      return {
        error: redact(`HTTP ${response.statusCode}: ${text || '(empty body)'}`, secrets),
        status: response.statusCode,
      }
    }
    const parsed = JSON.parse(text) as { data?: { id?: unknown }[] }
    if (!Array.isArray(parsed.data)) return { error: 'the answer has no data[] list', status: 200 }
    return { ids: parsed.data.map((entry) => entry.id).filter((id): id is string => typeof id === 'string') }
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
    // undici's words for a refused tunnel do not say which proxy.
    const route = proxyFor(endpoint.modelsUrl, endpoint.proxy)
    const via = route === null ? '' : `through proxy ${route.origin}: `
    return {
      error: redact(`${via}${error instanceof Error ? error.message : String(error)}${cause}`, secrets),
      status: null,
    }
  } finally {
    proxy?.destroy().catch(() => {})
  }
}
