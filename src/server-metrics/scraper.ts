import { appendFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { StringDecoder } from 'node:string_decoder'
import { Client, type Dispatcher, ProxyAgent } from 'undici'
import { type ProxyEnv, proxyFor } from '../client/proxy.js'
import { proxyAgentOptions } from '../client/proxy-agent.js'
import { displayUrl, redact } from '../client/redact.js'
import { printable } from '../printable.js'
import { ExpositionFilter, type FilterOutcome } from './exposition-filter.js'
import { ExpositionError, parseExposition } from './prometheus-text.js'
import { boundedRawFamily, type ScrapeCut, type ServerScrape } from './scrape-file.js'
import { mapScrape, VOCABULARY_FAMILIES } from './vocabulary.js'

/**
 * Scrapes the server's /metrics (and any other metrics URL) every interval while the run loads it,
 * appending each scrape to server-metrics.jsonl. Each URL has its own undici Client, a connection the
 * load never uses, and a scrape of a URL starts only when its previous one is over, so a slow
 * endpoint (llama.cpp's /metrics took 3.5 s under load) scrapes less often and never piles up. Every
 * scrape is cut at its timeout: a failure is a marked gap, never a delay to any request.
 */

export interface ScrapeTarget {
  url: string
  /** Sent with every scrape: the target's own headers (Authorization) when the URL is on its origin. */
  headers: Record<string, string>
  /** The default URL (the target's /metrics), tried on the chance it exists: stopped quietly-once if not. */
  auto: boolean
}

export interface ScraperOptions {
  intervalMs: number
  /** Longest a scrape may take before it is cut and recorded as a gap. */
  timeoutMs: number
  /** server-metrics.jsonl; null = keep the scrapes in memory only. */
  file: string | null
  runId?: string
  /** One line per notable event: a URL stopped, its first gap. Never holds a header. */
  log: (line: string) => void
  /** Scrubbed from every stored or logged message (the API key). */
  secrets: readonly string[]
  /** The model under test: series labelled with another model are left out (exposition-filter.ts). */
  model?: string | null
  /** Past this size of server-metrics.jsonl, scrapes are stored without their raw families; default MAX_FILE_BYTES. */
  maxFileBytes?: number
  /** The environment's proxies (client/proxy.ts): a URL they cover is scraped through its proxy. */
  proxy?: ProxyEnv | null
}

/**
 * server-metrics.jsonl grows by a scrape's values (a few kB) and the raw families they came from.
 * Past this, only the values are stored (what `report` needs), and the log says so once.
 */
export const MAX_FILE_BYTES = 64 * 1024 * 1024

/** Largest /metrics body read: vLLM's is ~70 kB; a body far beyond is not a metrics page. */
const MAX_BODY_BYTES = 16 * 1024 * 1024

interface UrlState {
  target: ScrapeTarget
  /** The URL as stored and shown: no user:password. */
  shown: string
  /** Its own Client, or a ProxyAgent when the URL goes through a proxy. */
  client: Dispatcher
  origin: string
  path: string
  timer: NodeJS.Timeout | null
  inFlight: Promise<void> | null
  abort: AbortController | null
  answered: boolean
  stopped: boolean
  gapLogged: boolean
  /** Said once: labelled series, none of the run's model, every model's added up. */
  unmatchedLogged: boolean
}

/** A URL's connection: a Client of its own, or a ProxyAgent through the proxy proxyFor names. */
function scrapeClient(url: URL, options: ScraperOptions): Dispatcher {
  const settings = {
    pipelining: 1,
    connectTimeout: options.timeoutMs,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: Math.max(options.intervalMs * 2, 4_000),
  }
  const route = proxyFor(url, options.proxy ?? null)
  if (route === null) return new Client(url.origin, settings)
  return new ProxyAgent({ ...settings, ...proxyAgentOptions(url, route) })
}

export class ServerMetricsScraper {
  /** Every scrape so far, values only (the raw families are on disk): the per-level figures read these. */
  readonly scrapes: ServerScrape[] = []
  private readonly urls: UrlState[]
  private closed = false
  /** Set when stop() cuts the scrapes in flight: their gaps say so. */
  private stopping = false
  private writeFailed = false
  private fileBytes = 0
  private fileCapped = false

  constructor(
    targets: readonly ScrapeTarget[],
    private readonly options: ScraperOptions,
  ) {
    this.urls = targets.map((target) => {
      const url = new URL(target.url)
      return {
        target,
        shown: displayUrl(target.url),
        client: scrapeClient(url, options),
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        timer: null,
        inFlight: null,
        abort: null,
        answered: false,
        stopped: false,
        gapLogged: false,
        unmatchedLogged: false,
      }
    })
  }

  /** Scrapes every URL now and then every interval. */
  start(): void {
    for (const state of this.urls) this.tick(state)
  }

  /**
   * One last scrape of every URL that answered (so the last level's increases have a scrape after
   * its end), then the connections are closed. A scrape still in flight is cut, not waited for.
   */
  async stop(finalScrape = true): Promise<void> {
    if (this.closed) return
    this.stopping = true
    for (const state of this.urls) {
      if (state.timer !== null) clearTimeout(state.timer)
      state.timer = null
    }
    if (finalScrape) {
      for (const state of this.urls) state.abort?.abort()
      await Promise.all(this.urls.map((state) => state.inFlight))
      await Promise.all(this.urls.filter((s) => s.answered && !s.stopped).map((s) => this.scrape(s)))
    }
    this.closed = true
    for (const state of this.urls) state.abort?.abort()
    await Promise.all(this.urls.map((state) => state.client.destroy().catch(() => {})))
  }

  private tick(state: UrlState): void {
    if (this.stopping || state.stopped) return
    const started = performance.now()
    state.inFlight = this.scrape(state).finally(() => {
      state.inFlight = null
      if (this.stopping || state.stopped) return
      // Every interval from the previous start, at once when the scrape took longer.
      const wait = Math.max(0, this.options.intervalMs - (performance.now() - started))
      state.timer = setTimeout(() => this.tick(state), wait)
      state.timer.unref()
    })
  }

  private async scrape(state: UrlState): Promise<void> {
    const at = performance.now()
    const abort = new AbortController()
    state.abort = abort
    const cut = setTimeout(() => abort.abort(), this.options.timeoutMs)
    try {
      const response = await state.client.request({
        origin: state.origin,
        path: state.path,
        method: 'GET',
        headers: { ...state.target.headers, accept: 'text/plain;version=0.0.4, */*;q=0.1' },
        signal: abort.signal,
      })
      // Not asked for (no Accept-Encoding is sent), never decoded: a compressed body (a gzip bomb at
      // worst) is refused by its header, not read as text.
      const encoding = String(response.headers['content-encoding'] ?? 'identity')
        .trim()
        .toLowerCase()
      if (encoding !== 'identity' && encoding !== '') {
        await response.body.dump()
        const shown = printable(encoding.slice(0, 40))
        const duration_ms = round(performance.now() - at)
        await this.refused(state, at, duration_ms, `a ${shown}-encoded body, which was not asked for`, true)
        return
      }
      const filtered = await readFiltered(
        response.body,
        new ExpositionFilter(VOCABULARY_FAMILIES, this.options.model ?? null),
      )
      const duration_ms = round(performance.now() - at)
      if (response.statusCode !== 200) {
        // The default URL is only a guess: any refusal (404, 401 from a hosted API) means not here.
        const notHere = state.target.auto || response.statusCode === 404
        await this.refused(state, at, duration_ms, `HTTP ${response.statusCode}`, notHere)
        return
      }
      let families: ReturnType<typeof parseExposition>
      try {
        families = parseExposition(filtered.kept > 0 ? filtered.text : filtered.head)
        // Nothing of the vocabulary kept: the head only said the body was metrics, with none of ours.
        if (filtered.kept === 0) families = new Map()
      } catch (error) {
        if (!(error instanceof ExpositionError)) throw error
        await this.refused(state, at, duration_ms, `not Prometheus text (${error.message})`, true)
        return
      }
      const { values, used } = mapScrape(families)
      state.answered = true
      this.noteUnmatched(state, filtered)
      const kept: ScrapeCut = {
        lines: filtered.lines,
        kept: filtered.kept,
        model: filtered.model,
        other_model_lines: filtered.other_model_lines,
        model_matched: filtered.model_matched,
      }
      this.keep(
        { kind: 'scrape', url: state.shown, at: round(at), duration_ms, values, cut: kept, ...this.runTag() },
        used.map(boundedRawFamily),
      )
    } catch (error) {
      const duration_ms = round(performance.now() - at)
      const message = abort.signal.aborted
        ? this.stopping
          ? 'cut at the end of the run'
          : `no answer within ${this.options.timeoutMs} ms`
        : error instanceof Error
          ? error.message
          : String(error)
      this.gap(state, at, duration_ms, message)
    } finally {
      clearTimeout(cut)
      if (state.abort === abort) state.abort = null
    }
  }

  /**
   * A URL that answers, but not with metrics. Before it ever gave metrics, a 404 or a page that is
   * not Prometheus text means there are none there: said once, and the URL is not asked again.
   * After, it is a gap like any failure.
   */
  private async refused(
    state: UrlState,
    at: number,
    duration_ms: number,
    what: string,
    noMetricsHere: boolean,
  ): Promise<void> {
    if (!noMetricsHere || state.answered) {
      this.gap(state, at, duration_ms, what)
      return
    }
    state.stopped = true
    const reason = `${what}: no Prometheus metrics there`
    this.keep({ kind: 'stopped', url: state.shown, at: round(at), reason, ...this.runTag() })
    this.options.log(
      state.target.auto
        ? `server metrics: GET ${state.shown} answered ${what}; not scraped (give --server-metrics URL for a metrics port, or --no-server-metrics)`
        : `server metrics: GET ${state.shown} answered ${what}; not scraped again`,
    )
  }

  private gap(state: UrlState, at: number, duration_ms: number, message: string): void {
    const error = redact(message, this.options.secrets)
    this.keep({ kind: 'gap', url: state.shown, at: round(at), duration_ms, error, ...this.runTag() })
    if (state.gapLogged || this.stopping) return
    state.gapLogged = true
    this.options.log(
      `server metrics: ${state.shown}: ${error} (a gap; later ones are in server-metrics.jsonl, not shown)`,
    )
  }

  /**
   * Series labelled with models, none of them the run's (a served model name that differs from the
   * one sent): every model's series were added up. Said once per URL; each scrape's line says it too.
   */
  private noteUnmatched(state: UrlState, cut: FilterOutcome): void {
    if (cut.model === null || cut.model_matched || cut.other_model_lines === 0 || state.unmatchedLogged)
      return
    state.unmatchedLogged = true
    this.options.log(
      `server metrics: ${state.shown}: no series labelled with model ${cut.model}; the figures add up every model's series (${cut.other_model_lines} lines)`,
    )
  }

  private runTag(): { run?: string } {
    return this.options.runId === undefined ? {} : { run: this.options.runId }
  }

  /** In memory (values only) and appended to the file with the raw families, while the file is under its cap. */
  private keep(scrape: ServerScrape, families?: ReturnType<typeof boundedRawFamily>[]): void {
    this.scrapes.push(scrape)
    if (this.options.file === null || this.writeFailed) return
    try {
      const cap = this.options.maxFileBytes ?? MAX_FILE_BYTES
      let text = `${JSON.stringify(families === undefined || this.fileCapped ? scrape : { ...scrape, families })}\n`
      if (!this.fileCapped && families !== undefined && this.fileBytes + Buffer.byteLength(text) > cap) {
        this.fileCapped = true
        this.options.log(
          `server metrics: ${this.options.file} reached ${(cap / 1024 / 1024).toFixed(0)} MiB; later scrapes are stored without their raw families (the values report needs are kept)`,
        )
        text = `${JSON.stringify(scrape)}\n`
      }
      appendFileSync(this.options.file, text)
      this.fileBytes += Buffer.byteLength(text)
    } catch (error) {
      // A full disk stops the file, not the run: the records' own writer is what stops a run.
      this.writeFailed = true
      this.options.log(
        `server metrics: cannot write ${this.options.file} (${error instanceof Error ? error.message : String(error)}); scrapes kept in memory only`,
      )
    }
  }
}

/** The body, cut by the filter chunk by chunk as it arrives (no turn of the event loop holds it long). */
async function readFiltered(body: AsyncIterable<Buffer>, filter: ExpositionFilter): Promise<FilterOutcome> {
  const decoder = new StringDecoder('utf8')
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > MAX_BODY_BYTES)
      throw new Error(`body above ${MAX_BODY_BYTES / 1024 / 1024} MiB: not a metrics page`)
    filter.push(decoder.write(chunk))
  }
  filter.push(decoder.end())
  return filter.end()
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}
