import { type Endpoint, getHeaders } from '../client/target.js'
import type { ScrapeTarget } from './scraper.js'

/** What the run's settings say about scraping (RunConfig.server_metrics). */
export interface ServerMetricsSettings {
  enabled: boolean
  /** "auto" = GET /metrics at the target's origin. */
  urls: readonly string[]
  interval_s: number
}

/** A scrape is cut after the interval or this, whichever is longer: llama.cpp's /metrics took 3.5 s under load. */
export const SCRAPE_TIMEOUT_MS = 5_000

/**
 * The URLs to scrape, each once. A URL on a target's origin gets the target's headers (some
 * gateways want the Authorization there too); any other gets none but its own user:password.
 */
export function scrapeTargets(
  settings: ServerMetricsSettings,
  endpoint: Pick<Endpoint, 'origin' | 'headers'>,
  /** Several endpoints: the others' origins, whose /metrics "auto" scrapes as well (their gauges add up). */
  moreOrigins: readonly string[] = [],
): ScrapeTarget[] {
  if (!settings.enabled) return []
  const origins = [endpoint.origin, ...moreOrigins].map((origin) => new URL(origin).origin)
  const targets = new Map<string, ScrapeTarget>()
  for (const url of settings.urls) {
    const auto = url === 'auto'
    for (const wanted of auto ? origins.map((origin) => `${origin}/metrics`) : [url]) {
      const parsed = new URL(wanted)
      const headers = origins.includes(parsed.origin) ? withoutBody(endpoint) : basicAuth(parsed)
      parsed.username = ''
      parsed.password = ''
      const key = parsed.toString()
      if (!targets.has(key)) targets.set(key, { url: key, headers, auto })
    }
  }
  return [...targets.values()]
}

function withoutBody(endpoint: Pick<Endpoint, 'headers'>): Record<string, string> {
  const { accept: _accept, ...headers } = getHeaders(endpoint as Endpoint)
  return headers
}

function basicAuth(url: URL): Record<string, string> {
  if (url.username === '' && url.password === '') return {}
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
  return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` }
}

/** Scrapes are cut at the interval when it is the longer. */
export function scrapeTimeoutMs(settings: ServerMetricsSettings): number {
  return Math.max(SCRAPE_TIMEOUT_MS, settings.interval_s * 1000)
}
