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
 * The URLs to scrape, each once. A URL on an endpoint's origin gets that endpoint's headers (some
 * gateways want the Authorization there too; each server only its own key); any other gets none but
 * its own user:password. "auto" is each endpoint's /metrics.
 */
export function scrapeTargets(
  settings: ServerMetricsSettings,
  /** The run's endpoints, its own first (several endpoints: their gauges add up). */
  endpoints: readonly Pick<Endpoint, 'origin' | 'headers'>[],
): ScrapeTarget[] {
  if (!settings.enabled) return []
  // The first endpoint on an origin speaks for it (two paths on one server share its /metrics).
  const byOrigin = new Map<string, Pick<Endpoint, 'origin' | 'headers'>>()
  for (const endpoint of endpoints) {
    const origin = new URL(endpoint.origin).origin
    if (!byOrigin.has(origin)) byOrigin.set(origin, endpoint)
  }
  const targets = new Map<string, ScrapeTarget>()
  for (const url of settings.urls) {
    const auto = url === 'auto'
    for (const wanted of auto ? [...byOrigin.keys()].map((origin) => `${origin}/metrics`) : [url]) {
      const parsed = new URL(wanted)
      const own = byOrigin.get(parsed.origin)
      const headers = own === undefined ? basicAuth(parsed) : withoutBody(own)
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
