import { existsSync } from 'node:fs'
import { type BadLines, readCheckedLines } from '../records/jsonl-reader.js'
import { firstSchemaIssue } from '../schema-issue.js'
import type { Family } from './prometheus-text.js'
import { scrapeSchema } from './scrape-schema.js'
import type { ScrapeValues } from './vocabulary.js'

/**
 * server-metrics.jsonl: one line per scrape of a metrics URL, appended as scrapes arrive, so
 * `report` and `merge` recompute the server's per-level figures from it the way they recompute the
 * client's from requests.jsonl. `at` is on the records' clock (performance.now() of the run, ms).
 * URLs are stored without credentials; the API key is never in the file.
 */
export type ServerScrape = ScrapeOk | ScrapeGap | ScrapeStopped

interface ScrapeLine {
  url: string
  /** When the scrape was sent, ms on the run clock (the records' sent_at and end_at clock). */
  at: number
  /** The id of the run that wrote it, as in the records: a file holding two runs is caught. */
  run?: string
}

export interface ScrapeOk extends ScrapeLine {
  kind: 'scrape'
  duration_ms: number
  /** The scrape in the vocabulary (vocabulary.ts): what the per-level figures are computed from. */
  values: ScrapeValues
  /** The families the values were read from, as parsed (histogram bounds: "+Inf" for infinity). */
  families?: RawFamily[]
  /** What was kept of the body (exposition-filter.ts); absent in files of before the cut. */
  cut?: ScrapeCut
}

/** What a scrape kept of the /metrics body: the vocabulary's families, the model's series. */
export interface ScrapeCut {
  /** Lines in the body. */
  lines: number
  /** Lines kept and parsed. */
  kept: number
  /** The model the series were filtered to (lower case); null when the run's model was not known. */
  model: string | null
  /** Lines of the vocabulary's families labelled with another model. */
  other_model_lines: number
  /** False with other_model_lines > 0: none was the run's model, so every model's series were added up. */
  model_matched: boolean
}

/** A scrape that failed or took too long: a marked gap in the server's figures, with why. */
export interface ScrapeGap extends ScrapeLine {
  kind: 'gap'
  duration_ms: number
  error: string
}

/** The URL is not scraped again (the default /metrics answered 404, or not Prometheus text). */
export interface ScrapeStopped extends ScrapeLine {
  kind: 'stopped'
  reason: string
}

export interface RawFamily {
  name: string
  type: Family['type']
  /** Set when the family had more series than RAW_SERIES_KEPT: how many; only the first ones are stored. */
  series_total?: number
  series?: Family['series']
  histograms?: {
    labels: Record<string, string>
    buckets: [number | '+Inf', number][]
    count: number | null
    sum: number | null
  }[]
}

/** A family as JSON can hold it. */
export function rawFamily(family: Family): RawFamily {
  if (family.type !== 'histogram') return { name: family.name, type: family.type, series: family.series }
  return {
    name: family.name,
    type: family.type,
    histograms: family.histograms.map((series) => ({
      ...series,
      buckets: series.buckets.map(([bound, count]) => [Number.isFinite(bound) ? bound : '+Inf', count]),
    })),
  }
}

/** Series of one family stored per scrape: the raw families are an excerpt for a reader, not what report reads. */
export const RAW_SERIES_KEPT = 64

/** rawFamily with at most RAW_SERIES_KEPT series, and their total when there were more. */
export function boundedRawFamily(family: Family): RawFamily {
  const total = Math.max(family.series.length, family.histograms.length)
  if (total <= RAW_SERIES_KEPT) return rawFamily(family)
  return {
    ...rawFamily({
      ...family,
      series: family.series.slice(0, RAW_SERIES_KEPT),
      histograms: family.histograms.slice(0, RAW_SERIES_KEPT),
    }),
    series_total: total,
  }
}

/**
 * Reads server-metrics.jsonl back, each line checked against the scrape's schema; no scrapes when
 * the run wrote none. A torn last line (a crash) is left out, as are lines of other runs when the run
 * id is known; lines that are not scrapes are left out and counted in `bad` (loadRun says so, or
 * refuses the folder).
 */
export function readScrapeLines(
  path: string,
  runId?: string,
): { scrapes: ServerScrape[]; bad: BadLines | null } {
  if (!existsSync(path)) return { scrapes: [], bad: null }
  const read = readCheckedLines<ServerScrape>(path, (value) => firstSchemaIssue(scrapeSchema(), value))
  const scrapes = read.items.filter(
    (scrape) => runId === undefined || scrape.run === undefined || scrape.run === runId,
  )
  // Only the values are needed again: the raw families stay on disk.
  for (const scrape of scrapes) if (scrape.kind === 'scrape') delete scrape.families
  return { scrapes, bad: read.bad }
}

/** The scrapes readScrapeLines keeps (a result folder's loader has already said what was left out). */
export function readServerScrapes(path: string, runId?: string): ServerScrape[] {
  return readScrapeLines(path, runId).scrapes
}
