import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { RunConfig } from '../../config/types.js'
import { ttftMs } from '../../metrics/derive.js'
import { billedInputTokens } from '../../metrics/workload-figures.js'
import type { RequestRecord } from '../../records/types.js'
import type { RecordObserver } from './record-sink.js'

/**
 * The client's side of a run, live, for Prometheus (and so a Grafana board beside the server's own
 * metrics): an opt-in HTTP endpoint serving /metrics from a registry of its own (never prom-client's
 * global one, which an embedding program may use). Every figure is updated on the main thread as
 * the workers' record batches arrive (RecordSink.keep) or read when scraped (the in-flight count):
 * nothing on the load-generating threads' hot path.
 */

/** TTFT, seconds: from a few milliseconds (a warm local server) to a minute (a queue). */
const TTFT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** Inter-token latency, seconds: a fast decoder's ~1 ms to a stalled stream's seconds. */
const ITL_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
/**
 * After the run, the endpoint stays up until one more scrape has read the final counts, at most this
 * long (Prometheus's default scrape interval); not at all when nothing scraped it during the run.
 */
const FINAL_SCRAPE_WAIT_MS = 15_000

/** The endpoint could not listen (port in use, unknown host): the user's to fix, before anything is sent. */
export class LiveMetricsError extends Error {}

/** The endpoint when config asks for one (run.metrics_port), its URL said before anything is sent. */
export async function startLiveMetrics(
  config: RunConfig,
  log: (line: string) => void,
): Promise<LiveMetrics | null> {
  if (config.run.metrics_port === null) return null
  const live = await LiveMetrics.start(config.run.metrics_host, config.run.metrics_port)
  log(`live metrics: ${live.url} (Prometheus text format, served until the run ends)`)
  return live
}

/** prom-client, loaded only when a run serves live metrics: most runs never pay for its modules. */
type PromClient = typeof import('prom-client')

export class LiveMetrics implements RecordObserver {
  readonly registry: Registry
  private inFlightSource: () => number = () => 0
  private scrapes = 0
  private onScrape: (() => void) | null = null
  private closing: Promise<void> | null = null

  private readonly requests: Counter<'level' | 'phase' | 'outcome'>
  private readonly tokens: Counter<'level' | 'kind'>
  private readonly ttft: Histogram<'level'>
  private readonly itl: Histogram<'level'>
  private readonly level: Gauge

  private constructor(
    private readonly server: Server,
    readonly url: string,
    prom: PromClient,
  ) {
    const registry = new prom.Registry()
    this.registry = registry
    this.requests = new prom.Counter({
      name: 'llmbench_requests_total',
      help: 'Requests finished, by level, phase and outcome (ok or the error class)',
      labelNames: ['level', 'phase', 'outcome'] as const,
      registers: [registry],
    })
    this.tokens = new prom.Counter({
      name: 'llmbench_tokens_total',
      help: 'Tokens of finished requests, by level and kind (input as billed, output as received)',
      labelNames: ['level', 'kind'] as const,
      registers: [registry],
    })
    const perLevel = (name: string, help: string, buckets: number[]): Histogram<'level'> =>
      new prom.Histogram({ name, help, labelNames: ['level'] as const, buckets, registers: [registry] })
    this.ttft = perLevel(
      'llmbench_ttft_seconds',
      'Time to first token of finished requests, seconds',
      TTFT_BUCKETS_S,
    )
    this.itl = perLevel(
      'llmbench_itl_seconds',
      'Gaps between consecutive token-bearing events of finished requests, seconds',
      ITL_BUCKETS_S,
    )
    this.level = new prom.Gauge({
      name: 'llmbench_level',
      help: 'The level running now: streams, requests per second, or a trace speed',
      registers: [registry],
    })
    const source = () => this.inFlightSource()
    new prom.Gauge({
      name: 'llmbench_in_flight_requests',
      help: "Requests sent and not yet finished, as of the worker threads' last batches (every 50 ms)",
      registers: [registry],
      collect() {
        this.set(source())
      },
    })
  }

  /** Listens on host:port; a port in use or a bad host is an error naming them, before anything is sent. */
  static async start(host: string, port: number): Promise<LiveMetrics> {
    const prom = await import('prom-client')
    let metrics: LiveMetrics | null = null
    const server = createServer((request, response) => {
      if (metrics === null || request.method !== 'GET' || !request.url?.startsWith('/metrics')) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n')
        return
      }
      metrics.serve(response)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new LiveMetricsError(
            `live metrics: cannot listen on ${host}:${port} (--metrics-port, --metrics-host): ${(error as Error).message}`,
          ),
        ),
      )
      server.listen(port, host, () => resolve())
    })
    const bound = server.address() as AddressInfo
    const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address
    metrics = new LiveMetrics(server, `http://${shownHost}:${bound.port}/metrics`, prom)
    return metrics
  }

  private serve(response: import('node:http').ServerResponse): void {
    this.registry
      .metrics()
      .then((text) => {
        response.writeHead(200, { 'content-type': this.registry.contentType }).end(text)
        this.scrapes++
        this.onScrape?.()
      })
      .catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`)
      })
  }

  /** Where the in-flight gauge reads its value when scraped (the worker pool, once it exists). */
  watchInFlight(source: () => number): void {
    this.inFlightSource = source
  }

  setLevel(value: number): void {
    this.level.set(value)
  }

  observe(record: RequestRecord): void {
    const level = String(record.level)
    this.requests.inc({ level, phase: record.phase, outcome: record.error?.class ?? 'ok' })
    this.tokens.inc({ level, kind: 'input' }, billedInputTokens(record))
    this.tokens.inc({ level, kind: 'output' }, record.output_tokens)
    const ttft = ttftMs(record)
    if (ttft !== null) this.ttft.observe({ level }, ttft / 1000)
    const times = record.token_times
    for (let i = 1; i < times.length; i++)
      this.itl.observe({ level }, ((times[i] as number) - (times[i - 1] as number)) / 1000)
  }

  /**
   * Stops serving (once; later calls wait for the first). `waitForFinalScrape`: when something scraped
   * during the run, first wait (at most FINAL_SCRAPE_WAIT_MS) for one more scrape, so the final
   * counts reach Prometheus.
   */
  close(waitForFinalScrape: boolean): Promise<void> {
    this.closing ??= this.shutDown(waitForFinalScrape)
    return this.closing
  }

  private async shutDown(waitForFinalScrape: boolean): Promise<void> {
    this.inFlightSource = () => 0
    if (waitForFinalScrape && this.scrapes > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FINAL_SCRAPE_WAIT_MS)
        this.onScrape = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    this.onScrape = null
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
