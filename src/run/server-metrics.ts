import { join } from 'node:path'
import type { Endpoint } from '../client/endpoint.js'
import type { RunConfig } from '../config/types.js'
import { SERVER_METRICS_FILE } from '../result/folder-layout.js'
import { ServerMetricsScraper } from '../server-metrics/scraper.js'
import { scrapeTargets, scrapeTimeoutMs } from '../server-metrics/targets.js'

/** The run's scraper of the server's metrics, started; null when scraping is off. */
export function startServerMetrics(
  config: RunConfig,
  endpoint: Endpoint,
  outDir: string,
  runId: string,
  log: (line: string) => void,
): ServerMetricsScraper | null {
  const targets = scrapeTargets(config.server_metrics, endpoint)
  if (targets.length === 0) return null
  const scraper = new ServerMetricsScraper(targets, {
    intervalMs: config.server_metrics.interval_s * 1000,
    timeoutMs: scrapeTimeoutMs(config.server_metrics),
    file: join(outDir, SERVER_METRICS_FILE),
    runId,
    log,
    secrets: endpoint.secrets,
  })
  scraper.start()
  return scraper
}
