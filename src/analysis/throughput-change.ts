import { percentileOfSorted } from '../metrics/distribution.js'
import { seededRandom } from '../random.js'

/** One level's requests, as the level throughput is made of them. */
export interface ThroughputSample {
  /** Output tokens of every measured request (0 for a failed one). */
  tokens: readonly number[]
  /** Seconds each request took, send to end. */
  seconds: readonly number[]
  /** The level's figure: Σ tokens / the level's window (first send to last end). */
  figure: number
}

export interface ThroughputChange {
  /** (new figure - base figure) / base figure: the change of the figures the reports show. */
  change: number
  /** 95% bootstrap interval of that same relative change. */
  interval: { low: number; high: number }
  /** Two-sided bootstrap p-value: how often the resampled change falls on the other side of 0. */
  p_value: number
}

/**
 * The change of level throughput with its interval and p-value, all on that one quantity (a
 * change and an interval taken from different quantities can disagree in sign).
 *
 * Each round resamples each run's requests with replacement and moves the level figure by what
 * the resample changes. In a closed loop the window is the streams' busy time, so the figure is
 * c × Σ tokens / Σ request seconds up to ramp-up and drain: a resample scales it by its ratio
 * Σ tokens* / Σ seconds* over the observed one, which carries both the token counts' and the
 * latencies' variation. In an open loop the window is set by the arrivals, not by the requests,
 * so only the tokens vary: Σ tokens* / window. Unresampled, both give the figure itself, so the
 * interval is centred on the reported change.
 */
export function throughputChange(
  base: ThroughputSample,
  next: ThroughputSample,
  closedLoop: boolean,
  rounds = 1000,
  seed = 42,
): ThroughputChange | null {
  if (base.figure <= 0 || base.tokens.length === 0 || next.tokens.length === 0) return null
  const random = seededRandom(seed)
  const scaleOf = (sample: ThroughputSample): (() => number) => {
    const n = sample.tokens.length
    const tokens = sum(sample.tokens)
    const seconds = sum(sample.seconds)
    const observed = closedLoop ? (seconds > 0 ? tokens / seconds : 0) : tokens
    return () => {
      let drawnTokens = 0
      let drawnSeconds = 0
      for (let i = 0; i < n; i++) {
        const k = Math.floor(random() * n)
        drawnTokens += sample.tokens[k] as number
        drawnSeconds += sample.seconds[k] as number
      }
      if (observed === 0) return 1
      return (closedLoop ? (drawnSeconds > 0 ? drawnTokens / drawnSeconds : 0) : drawnTokens) / observed
    }
  }
  const drawBase = scaleOf(base)
  const drawNext = scaleOf(next)
  const diffs: number[] = []
  for (let round = 0; round < rounds; round++) {
    const baseFigure = base.figure * drawBase()
    const nextFigure = next.figure * drawNext()
    if (baseFigure > 0) diffs.push((nextFigure - baseFigure) / baseFigure)
  }
  if (diffs.length === 0) return null
  diffs.sort((x, y) => x - y)
  const below = diffs.filter((d) => d <= 0).length
  const above = diffs.filter((d) => d >= 0).length
  return {
    change: (next.figure - base.figure) / base.figure,
    interval: {
      low: percentileOfSorted(diffs, 2.5) as number,
      high: percentileOfSorted(diffs, 97.5) as number,
    },
    p_value: Math.min(1, (2 * Math.min(below, above)) / diffs.length),
  }
}

function sum(values: readonly number[]): number {
  let total = 0
  for (const value of values) total += value
  return total
}
