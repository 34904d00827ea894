/**
 * Joins a base URL and an endpoint path without doubling `/v1`.
 *
 * docs/configuration.md "URL joining": `base_url` may or may not end in `/v1` (providers document both
 * forms), while the endpoint is written with it ("/v1/chat/completions"). So a base ending in /v1
 * absorbs the endpoint's leading /v1:
 *   "https://h/api/v1" + "/v1/chat/completions" -> "https://h/api/v1/chat/completions"
 *   "https://h/api"    + "/v1/chat/completions" -> "https://h/api/v1/chat/completions"
 *   "https://h/api/v1" + "/chat/completions"    -> "https://h/api/v1/chat/completions"
 */
export function joinUrl(base_url: string, endpoint: string): string {
  const base = trimTrailingSlashes(base_url)
  let path = endpoint.startsWith('/') ? endpoint : `/${endpoint}`
  if (/\/v1$/.test(base) && /^\/v1(?:\/|$)/.test(path)) path = path.slice('/v1'.length)
  return base + path
}

/** "https://h/api/" -> "https://h/api": every join then adds exactly one slash. */
export function trimTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '')
}

/**
 * A URL as written, safe to quote in an error even when it does not parse: user:password@ and the
 * query string (either may hold a credential) replaced by "***".
 */
export function maskUrlSecrets(text: string): string {
  return text.replace(/^([^/?#@\s]*\/\/)?[^/?#\s]*@/, '$1***@').replace(/\?.*$/s, '?***')
}
