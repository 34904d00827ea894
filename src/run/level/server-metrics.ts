import { join } from 'node:path'
import type { RunConfig } from '../../config/types.js'
import { SERVER_METRICS_FILE } from '../../result/folder-layout.js'
import type { ServerMetricsScraper } from '../../server-metrics/scraper.js'
import { scrapeTargets, scrapeTimeoutMs } from '../../server-metrics/targets.js'
import { firstEndpoint, type RunTargets } from '../setup/run-targets.js'

/**
 * The run's scraper of the server's metrics, started; null when scraping is off. The scraper (with
 * its HTTP client and exposition parser, ~20 MB) loads only when there is something to scrape.
 */
export async function startServerMetrics(
  config: RunConfig,
  run: RunTargets,
  outDir: string,
  runId: string,
  log: (line: string) => void,
): Promise<ServerMetricsScraper | null> {
  const endpoint = firstEndpoint(run)
  // Several endpoints: "auto" scrapes each one's /metrics, each with its own endpoint's headers.
  const targets = scrapeTargets(
    config.server_metrics,
    run.endpoints.map((resolved) => resolved.endpoint),
  )
  if (targets.length === 0) return null
  const { ServerMetricsScraper } = await import('../../server-metrics/scraper.js')
  const scraper = new ServerMetricsScraper(targets, {
    intervalMs: config.server_metrics.interval_s * 1000,
    timeoutMs: scrapeTimeoutMs(config.server_metrics),
    file: join(outDir, SERVER_METRICS_FILE),
    runId,
    log,
    // Every endpoint's: the first's secrets are all of them (resolveTargets).
    secrets: endpoint.secrets,
    // Series of other models on the same server are left out (a /metrics of many models).
    model: endpoint.body.model,
    proxy: endpoint.proxy,
  })
  scraper.start()
  return scraper
}
