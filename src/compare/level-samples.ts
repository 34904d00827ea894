import { blockLengthFor } from '../analysis/stats.js'
import { isOk } from '../metrics/derive.js'
import { type FluidityDeadlines, requestFluidity } from '../metrics/fluidity.js'
import { measuresFor } from '../metrics/measures.js'
import type { RequestRecord } from '../records/types.js'

/**
 * One run's measured requests at one level, in the order they were sent, as compare resamples them:
 * per request its latency values (none when it failed or has no such figure), its tokens and
 * seconds for the level throughput, and whether it succeeded.
 */
export interface LevelSamples {
  /**
   * Per compared measure (measures.ts, by key: ttft, tpot, itl, e2e), per request its values (ITL:
   * every gap of the request's stream).
   */
  measures: Record<string, number[][]>
  /**
   * The fluidity index per request (a failed one 0, one with no token none), under the deadlines
   * compare was given (the base run's, so both runs are judged against the same pace); empty lists
   * without deadlines.
   */
  fluidity: number[][]
  /** Output tokens per request, 0 for a failed one: what the level throughput is made of. */
  tokens: number[]
  /** Seconds each request took, send to end. */
  seconds: number[]
  ok: boolean[]
  /** First send to last end, seconds (--repeat: summed over the runs of the level). */
  windowS: number
  /** Consecutive requests a bootstrap block holds (see blockLengthFor). */
  blockLength: number
}

export function levelSamples(
  records: readonly RequestRecord[],
  value: number,
  deadlines: FluidityDeadlines | null = null,
): LevelSamples {
  const measured = records
    .filter((record) => record.phase === 'measure' && record.level === value)
    .sort((a, b) => a.sent_at - b.sent_at)
  const one = (figure: number | null): number[] => (figure === null ? [] : [figure])
  const compared = measuresFor('compare')
  const samples: LevelSamples = {
    measures: Object.fromEntries(compared.map((measure) => [measure.key, []])),
    fluidity: [],
    tokens: [],
    seconds: [],
    ok: [],
    windowS: 0,
    blockLength: 1,
  }
  // --repeat: each run of the level has its own window; the gaps between them (a drain, the next
  // run's warm-up) are no time the level was measured in.
  const windows = new Map<number, { start: number; end: number }>()
  for (const record of measured) {
    const run = record.repeat ?? 0
    const window = windows.get(run)
    if (window === undefined) windows.set(run, { start: record.sent_at, end: record.end_at })
    else {
      window.start = Math.min(window.start, record.sent_at)
      window.end = Math.max(window.end, record.end_at)
    }
    const ok = isOk(record)
    samples.ok.push(ok)
    samples.seconds.push((record.end_at - record.sent_at) / 1000)
    samples.tokens.push(ok ? record.output_tokens : 0)
    for (const measure of compared) {
      const values: number[] = []
      if (ok) measure.read(record, values, deadlines)
      samples.measures[measure.key]?.push(values)
    }
    samples.fluidity.push(one(deadlines === null ? null : requestFluidity(record, deadlines)))
  }
  samples.windowS = [...windows.values()].reduce((sum, w) => sum + (w.end - w.start) / 1000, 0)
  // The requests in flight on average (Little's law): those that shared the server at once.
  const busy = samples.seconds.reduce((a, b) => a + b, 0)
  const concurrent = samples.windowS > 0 ? busy / samples.windowS : 1
  samples.blockLength = blockLengthFor(measured.length, concurrent)
  return samples
}

/** Σ output tokens of the successful requests / the window: the level throughput, tok/s. */
export function levelThroughput(samples: LevelSamples): number | null {
  return samples.windowS > 0 ? samples.tokens.reduce((a, b) => a + b, 0) / samples.windowS : null
}
