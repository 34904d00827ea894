import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { printable } from '../printable.js'

/**
 * The Prometheus text exposition format (and OpenMetrics text) read into families, a thin layer over
 * parse-prometheus-text-format. The library tokenizes sample lines well (label escapes, +Inf,
 * timestamps) but its grouping loses data this program needs: a histogram whose series carry labels
 * (every vLLM and SGLang histogram: model_name, engine) comes back with its label sets merged and
 * its _count and _sum dropped, and an OpenMetrics counter (`# TYPE x counter` over samples named
 * `x_total`, `x_created`) comes back as untyped families. So the TYPE lines are read here and hidden
 * from the library, which then returns one family per sample name with every series' labels intact,
 * and the families are put back together from the declared types.
 */

export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'

export interface Series {
  labels: Record<string, string>
  value: number
}

export interface HistogramSeries {
  /** Without `le`. */
  labels: Record<string, string>
  /** Cumulative counts by upper bound, ascending; the last bound is +Inf when the server sent it. */
  buckets: [number, number][]
  count: number | null
  sum: number | null
}

export interface Family {
  name: string
  type: FamilyType
  /** Plain samples: a gauge's or counter's values, a summary's quantile lines. */
  series: Series[]
  /** Histograms only. */
  histograms: HistogramSeries[]
}

/**
 * The text is not the Prometheus exposition format (an HTML page, JSON, a torn body). Its message may
 * quote the body: clipped, with control bytes escaped, so a binary body is never printed.
 */
export class ExpositionError extends Error {
  override name = 'ExpositionError'
  constructor(message: string) {
    super(printable(clip(message, 160)))
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const TYPE_LINE = /^#\s*TYPE\s+(\S+)\s+(\S+)\s*$/
const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
/** Suffixes of a family's samples, by type (OpenMetrics adds _total, _created, _gcount, _gsum, _info). */
const SUFFIXES: Record<FamilyType, readonly string[]> = {
  counter: ['_total', '_created'],
  gauge: [],
  histogram: ['_bucket', '_count', '_sum', '_created', '_gcount', '_gsum'],
  summary: ['_count', '_sum', '_created'],
  untyped: [],
}

/** Families by name. Throws ExpositionError when the text is not the exposition format. */
export function parseExposition(text: string): Map<string, Family> {
  const declared = new Map<string, FamilyType>()
  // The library sees sample lines only: TYPE lines are read here, HELP text is not used (and the
  // library refuses a HELP line with no text, "# HELP x"), other comments (# EOF, # UNIT) carry nothing.
  const lines = text.split('\n').map((line) => {
    const trimmed = line.trim()
    if (!trimmed.startsWith('#')) return line
    const match = TYPE_LINE.exec(trimmed)
    if (match === null) return ''
    const [, name = '', type = ''] = match
    // OpenMetrics spells "info" and "stateset" too: both are gauges here.
    const lower = type.toLowerCase()
    declared.set(name, TYPES.has(lower) ? (lower as FamilyType) : 'gauge')
    return ''
  })
  let parsed: ReturnType<typeof parsePrometheusTextFormat>
  try {
    // The library drops the last sample of a text that does not end in a newline: one is added.
    parsed = parsePrometheusTextFormat(`${lines.join('\n')}\n`)
  } catch (error) {
    throw new ExpositionError(error instanceof Error ? error.message : String(error))
  }
  const families = new Map<string, Family>()
  for (const sampleFamily of parsed) {
    const sampleName = sampleFamily.name
    if (!METRIC_NAME.test(sampleName)) throw new ExpositionError(`not a metric name: ${clip(sampleName)}`)
    const { family, suffix } = familyOf(sampleName, declared)
    const entry = families.get(family.name) ?? family
    families.set(entry.name, entry)
    for (const sample of sampleFamily.metrics) {
      const value = parseValue(sample.value)
      if (value === null)
        throw new ExpositionError(`${clip(sampleName)}: not a number: ${clip(String(sample.value))}`)
      addSample(entry, suffix, sample.labels ?? {}, value)
    }
  }
  if (families.size === 0) throw new ExpositionError('no samples')
  for (const family of families.values()) {
    for (const histogram of family.histograms) histogram.buckets.sort((a, b) => a[0] - b[0])
  }
  return families
}

/** The declared family a sample name belongs to, and the suffix that led there ('' = the name itself). */
function familyOf(
  sampleName: string,
  declared: ReadonlyMap<string, FamilyType>,
): { family: Family; suffix: string } {
  const own = declared.get(sampleName)
  // A gauge named x_created beside a counter x_total (prometheus_client writes both): the name's own
  // declaration wins, so it stays a gauge of its own.
  if (own !== undefined) return { family: emptyFamily(sampleName, own), suffix: '' }
  for (const [type, suffixes] of Object.entries(SUFFIXES) as [FamilyType, readonly string[]][]) {
    for (const suffix of suffixes) {
      if (!sampleName.endsWith(suffix)) continue
      const base = sampleName.slice(0, -suffix.length)
      if (declared.get(base) === type) return { family: emptyFamily(base, type), suffix }
    }
  }
  return { family: emptyFamily(sampleName, 'untyped'), suffix: '' }
}

function emptyFamily(name: string, type: FamilyType): Family {
  return { name, type, series: [], histograms: [] }
}

function addSample(family: Family, suffix: string, labels: Record<string, string>, value: number): void {
  if (suffix === '_created') return // a start time, not a value
  if (family.type !== 'histogram') {
    // A counter's _total is its value; a summary's _count and _sum are not used here.
    if (suffix === '' || suffix === '_total') family.series.push({ labels, value })
    return
  }
  const { le, ...rest } = labels
  const histogram = histogramSeries(family, rest)
  if (suffix === '_bucket') {
    const bound = parseValue(le)
    if (bound !== null) histogram.buckets.push([bound, value])
  } else if (suffix === '_count' || suffix === '_gcount') histogram.count = value
  else if (suffix === '_sum' || suffix === '_gsum') histogram.sum = value
}

/**
 * A histogram's series by its labels, found through an index: a search of the family's list per
 * sample took ten minutes on a /metrics of 12,500 models' histograms.
 */
const seriesIndex = new WeakMap<Family, Map<string, HistogramSeries>>()

function histogramSeries(family: Family, labels: Record<string, string>): HistogramSeries {
  const key = labelKey(labels)
  let index = seriesIndex.get(family)
  if (index === undefined) {
    index = new Map()
    seriesIndex.set(family, index)
  }
  const existing = index.get(key)
  if (existing !== undefined) return existing
  const created: HistogramSeries = { labels, buckets: [], count: null, sum: null }
  family.histograms.push(created)
  index.set(key, created)
  return created
}

function labelKey(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Prometheus spells infinities +Inf/-Inf and not-a-number NaN; Go clients write "1e+06". */
function parseValue(text: string | undefined): number | null {
  if (text === undefined) return null
  const trimmed = text.trim()
  if (trimmed === '+Inf' || trimmed === 'Inf') return Number.POSITIVE_INFINITY
  if (trimmed === '-Inf') return Number.NEGATIVE_INFINITY
  if (trimmed === 'NaN') return Number.NaN
  if (trimmed === '' || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return null
  return Number(trimmed)
}

function clip(text: string, most = 60): string {
  return text.length > most ? `${text.slice(0, most)}…` : text
}
