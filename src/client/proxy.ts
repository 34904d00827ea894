import { isIP } from 'node:net'

/**
 * Which proxy, if any, a request to a URL goes through: the one place that decides it, for the
 * h1 client (absolute-form requests for http, a CONNECT tunnel for https) and for undici (the model
 * list, the server's self-description, the clock offset, /metrics scrapes) alike.
 *
 * The environment as curl reads it: `http_proxy` for http URLs, `https_proxy` for https URLs (never
 * the one for the other), the lower-case form winning over the upper-case one when both are set
 * (an empty lower-case value turns the proxy off), and `no_proxy`: a comma- or space-separated list
 * of host names (each also covers its subdomains; a leading `.` or `*.` is the same), IP addresses
 * (no CIDR ranges), any of them with `:port` to bypass one port only, or `*` for every host.
 */

/** The proxy variables of the environment, read once per run; travels with the Endpoint to the worker threads. */
export interface ProxyEnv {
  /** The proxy URL for http:// targets (credentials included); null = none. */
  http: string | null
  /** The proxy URL for https:// targets (credentials included); null = none. */
  https: string | null
  /** The raw no_proxy list ('' = none). */
  noProxy: string
}

/** The proxy one request goes through. */
export interface ProxyRoute {
  /** Where to connect: the proxy's host name or address (no brackets) and port. */
  host: string
  port: number
  /** `Basic …` from the proxy URL's user and password; null when it has none. Never shown. */
  authorization: string | null
  /** scheme://host:port of the proxy, credentials never: what is shown, and undici's ProxyAgent's uri. */
  origin: string
}

/** A proxy variable that cannot be used: its name and why, never its value's credentials. */
export class ProxySettingError extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`${variable}: ${reason}`)
    this.name = 'ProxySettingError'
  }
}

/** The first of the lower-case and upper-case forms that is set (lower-case first, as curl). */
function variable(env: NodeJS.ProcessEnv, name: string): { name: string; value: string } | null {
  for (const key of [name, name.toUpperCase()]) {
    const value = env[key]
    if (value !== undefined) return value.trim() === '' ? null : { name: key, value: value.trim() }
  }
  return null
}

/**
 * The proxy settings of `env`; null when no proxy is set (then nothing is proxied). A proxy URL that
 * cannot be used throws a ProxySettingError naming the variable: better refused before the run than
 * a run that fails on every request.
 */
export function proxyEnvOf(env: NodeJS.ProcessEnv): ProxyEnv | null {
  const http = variable(env, 'http_proxy')
  const https = variable(env, 'https_proxy')
  if (http === null && https === null) return null
  for (const set of [http, https]) if (set !== null) parseProxyUrl(set.value, set.name)
  return {
    http: http?.value ?? null,
    https: https?.value ?? null,
    noProxy: variable(env, 'no_proxy')?.value ?? '',
  }
}

/** A proxy URL as a URL: without a scheme it is http:// (as curl reads `proxy:3128`); only http:// proxies. */
function parseProxyUrl(value: string, name: string): URL {
  let url: URL
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`)
  } catch {
    throw new ProxySettingError(name, 'not a URL (expected http://[user:password@]host:port)')
  }
  if (url.protocol !== 'http:')
    throw new ProxySettingError(
      name,
      `${url.protocol}// proxies are not supported (expected http://[user:password@]host:port)`,
    )
  return url
}

/** The route through a proxy URL: where to connect, the Proxy-Authorization it calls for, how to show it. */
function routeOf(value: string, name: string): ProxyRoute {
  const url = parseProxyUrl(value, name)
  const credentials = url.username !== '' || url.password !== ''
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 80 : Number(url.port),
    authorization: credentials ? basicAuthorization(url) : null,
    origin: url.origin,
  }
}

function basicAuthorization(url: URL): string {
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
  return `Basic ${Buffer.from(pair).toString('base64')}`
}

/** The proxy a request to `target` goes through, or null (no proxy set for its scheme, or no_proxy names it). */
export function proxyFor(target: string | URL, proxies: ProxyEnv | null): ProxyRoute | null {
  if (proxies === null) return null
  const url = typeof target === 'string' ? new URL(target) : target
  const https = url.protocol === 'https:'
  const value = https ? proxies.https : proxies.http
  if (value === null) return null
  const port = url.port === '' ? (https ? 443 : 80) : Number(url.port)
  if (bypassed(url.hostname, port, proxies.noProxy)) return null
  return routeOf(value, https ? 'https_proxy' : 'http_proxy')
}

/** Whether `no_proxy` names this host (and port). */
export function bypassed(hostname: string, port: number, noProxy: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  for (const raw of noProxy.split(/[,\s]+/)) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') return true
    const { name, port: entryPort } = splitEntry(entry)
    if (entryPort !== null && entryPort !== port) continue
    if (host === name) return true
    // A name covers its subdomains; an address covers only itself.
    if (isIP(name) === 0 && name !== '' && host.endsWith(`.${name}`)) return true
  }
  return false
}

/** `host`, `.domain`, `*.domain`, `host:port`, `1.2.3.4`, `::1`, `[::1]:8080` → name and port. */
function splitEntry(entry: string): { name: string; port: number | null } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  if (bracketed !== null)
    return { name: bracketed[1] as string, port: bracketed[2] === undefined ? null : Number(bracketed[2]) }
  // A bare IPv6 address has colons of its own: no port to split off.
  if (isIP(entry) === 6) return { name: entry, port: null }
  const withPort = /^(.*):(\d+)$/.exec(entry)
  const name = (withPort === null ? entry : (withPort[1] as string)).replace(/^\*?\./, '')
  return { name, port: withPort === null ? null : Number(withPort[2]) }
}

/** How a run's requests reach the server, as meta.client.proxy keeps it (credentials never). */
export interface ProxyMeta {
  /** scheme://host:port of the proxy. */
  url: string
  /** The proxy URL carried a user and password (sent as Proxy-Authorization, never stored). */
  credentials: boolean
  /** `absolute-form`: http requests sent to the proxy naming the server; `CONNECT`: an https tunnel through it. */
  via: 'absolute-form' | 'CONNECT'
}

/** The proxy requests to `target` go through, for meta; null = straight to the server. */
export function proxyMetaOf(target: string, proxies: ProxyEnv | null): ProxyMeta | null {
  const route = proxyFor(target, proxies)
  if (route === null) return null
  return {
    url: route.origin,
    credentials: route.authorization !== null,
    via: new URL(target).protocol === 'https:' ? 'CONNECT' : 'absolute-form',
  }
}

/**
 * The line the run description prints about proxies, when the environment sets one: the proxy the
 * requests go through, or why they do not. Null without proxy variables (or with --no-proxy).
 */
export function proxyNote(target: string, proxies: ProxyEnv | null): string | null {
  if (proxies === null) return null
  const url = new URL(target)
  const meta = proxyMetaOf(target, proxies)
  if (meta !== null) {
    const how = meta.via === 'CONNECT' ? `a CONNECT tunnel to ${url.host}` : 'absolute-form requests'
    return `proxy: ${meta.url}${meta.credentials ? ' (with credentials)' : ''}, ${how} (--no-proxy to connect directly)`
  }
  const scheme = url.protocol.replace(':', '')
  const set = url.protocol === 'https:' ? proxies.https : proxies.http
  return set === null
    ? `proxy: none for ${scheme} (only the ${scheme === 'https' ? 'http' : 'https'} proxy variable is set)`
    : `proxy: none, NO_PROXY names ${url.host}`
}

/** What must never be printed or stored: the proxies' passwords, user:password pairs and Basic tokens. */
export function proxySecrets(proxies: ProxyEnv | null): string[] {
  if (proxies === null) return []
  const secrets: string[] = []
  for (const value of [proxies.http, proxies.https]) {
    if (value === null) continue
    const url = parseProxyUrl(value, 'proxy')
    if (url.username === '' && url.password === '') continue
    const route = routeOf(value, 'proxy')
    secrets.push(
      url.password,
      decodeURIComponent(url.password),
      `${url.username}:${url.password}`,
      (route.authorization as string).slice('Basic '.length),
    )
  }
  return [...new Set(secrets.filter((secret) => secret !== ''))]
}
