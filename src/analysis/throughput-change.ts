import type { WeightedStatistic } from './stats.js'

/** One level's requests, as the level throughput is made of them (in send order). */
export interface ThroughputSample {
  /** Output tokens of every measured request (0 for a failed one). */
  tokens: readonly number[]
  /** Seconds each request took, send to end. */
  seconds: readonly number[]
  /** The level's figure: Σ tokens / the level's window (first send to last end). */
  figure: number
}

/**
 * The level throughput as a figure of a resample of its requests (see blockBootstrapChange): the
 * reported figure moved by what the resample changes, so with every request drawn once it is the
 * figure itself and the interval is centred on the reported change.
 *
 * In a closed loop the window is the streams' busy time, so the figure is c × Σ tokens / Σ request
 * seconds up to ramp-up and drain: a resample scales it by its ratio Σ tokens* / Σ seconds* over the
 * observed one, which carries both the token counts' and the latencies' variation. In an open loop
 * the window is set by the arrivals, not by the requests, so only the tokens vary: Σ tokens* / window.
 */
export function throughputStatistic(sample: ThroughputSample, closedLoop: boolean): WeightedStatistic {
  const n = sample.tokens.length
  const ratio = (counts: Uint32Array): number => {
    let tokens = 0
    let seconds = 0
    for (let i = 0; i < n; i++) {
      const drawn = counts[i] as number
      tokens += drawn * (sample.tokens[i] as number)
      seconds += drawn * (sample.seconds[i] as number)
    }
    return closedLoop ? (seconds > 0 ? tokens / seconds : 0) : tokens
  }
  const observed = ratio(new Uint32Array(n).fill(1))
  return (counts) => (observed === 0 ? sample.figure : (sample.figure * ratio(counts)) / observed)
}
