import { isSecretHeaderName, publicHeaders } from './headers.js'
import type { MoreBaseUrl, RunConfig } from './types.js'

/**
 * The target as it may be digested or shown: user:password@ out of the base URL, secret-looking
 * query parameters (key=, token=) and header values replaced by "[redacted]". What identifies the run
 * (host, path, api-version, header names) stays.
 */
export function publicTarget(target: RunConfig['target']): RunConfig['target'] {
  return {
    ...target,
    base_url: publicUrl(target.base_url),
    headers: publicHeaders(target.headers),
    more_base_urls: target.more_base_urls.map(publicMoreBaseUrl),
  }
}

/** A plain URL as written (a run's digest stays what it was); an entry with its own headers shown as the run's are. */
function publicMoreBaseUrl(entry: MoreBaseUrl): MoreBaseUrl {
  if (typeof entry === 'string') return entry
  return {
    ...entry,
    url: publicUrl(entry.url),
    ...(entry.headers === undefined ? {} : { headers: publicHeaders(entry.headers) }),
  }
}

function publicUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return '[invalid url]'
  }
  url.username = ''
  url.password = ''
  for (const name of [...url.searchParams.keys()])
    if (isSecretHeaderName(name)) url.searchParams.set(name, '[redacted]')
  return url.toString()
}
