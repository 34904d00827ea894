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
  // A query on the base (Azure OpenAI's ?api-version=..., a gateway's routing parameter) belongs to
  // every request: it moves after the joined path, ahead of any query the endpoint has of its own.
  const queryAt = base_url.indexOf('?')
  const base = trimTrailingSlashes(queryAt < 0 ? base_url : base_url.slice(0, queryAt))
  const baseQuery = queryAt < 0 ? '' : base_url.slice(queryAt + 1)
  let path = endpoint.startsWith('/') ? endpoint : `/${endpoint}`
  if (/\/v1$/.test(base) && /^\/v1(?:\/|$)/.test(path)) path = path.slice('/v1'.length)
  if (baseQuery === '') return base + path
  return base + path + (path.includes('?') ? '&' : '?') + baseQuery
}

/** "https://h/api/" -> "https://h/api": every join then adds exactly one slash. A query stays. */
export function trimTrailingSlashes(url: string): string {
  return url.replace(/\/+(\?|$)/, '$1')
}

/**
 * A URL as written, safe to quote in an error even when it does not parse: user:password@ and the
 * query string (either may hold a credential) replaced by "***".
 */
export function maskUrlSecrets(text: string): string {
  return text.replace(/^([^/?#@\s]*\/\/)?[^/?#\s]*@/, '$1***@').replace(/\?.*$/s, '?***')
}
