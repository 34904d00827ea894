import type { Dispatcher, ProxyAgent } from 'undici'
import { type ProxyEnv, type ProxyRoute, proxyFor } from './proxy.js'

/**
 * The undici side of proxies: a ProxyAgent for the route proxyFor (client/proxy.ts) picks for `url`,
 * so undici's requests (the model list, the clock offset, the server's self-description, /metrics
 * scrapes) go the way the h1 client's do: http as absolute-form requests to the proxy, https through
 * a CONNECT tunnel, with the same Proxy-Authorization. Null when `url` is reached directly. undici
 * loads with the first call, not with every command that imports this module.
 */
export async function proxyAgentFor(
  url: string,
  proxies: ProxyEnv | null,
  options: { connectTimeout?: number; keepAliveTimeout?: number } = {},
): Promise<Dispatcher | null> {
  const route = proxyFor(url, proxies)
  if (route === null) return null
  const undici = await import('undici')
  return new undici.ProxyAgent({ ...options, ...proxyAgentOptions(new URL(url), route) })
}

/** A ProxyAgent's settings for requests to `url` through `route`: tunnelled for https only, as the h1 client. */
export function proxyAgentOptions(url: URL, route: ProxyRoute): ProxyAgent.Options {
  return {
    uri: route.origin,
    ...(route.authorization === null ? {} : { token: route.authorization }),
    proxyTunnel: url.protocol === 'https:',
  }
}
