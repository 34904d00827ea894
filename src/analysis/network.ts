import type { LevelSummary } from '../metrics/summarize.js'

type Level = Pick<LevelSummary, 'in_band' | 'network'>

/**
 * The run's network round trip, measured: what a request spends between the client and the engine
 * that is neither queueing nor the engine's work, so "client TTFT − server time" can be read as a
 * queue only after it is taken out. A relay 40 ms away adds 40 ms to every request's TTFT at c=1,
 * where nothing queues.
 *
 * - `first-byte`: where the engine reports its own prefill time (llama.cpp `timings`), the least
 *   client TTFT − server prefill over the run's requests: the request that waited for nothing still
 *   crossed the network (request out, first token back) and the server's HTTP layer. A floor, like
 *   TCP's own minimum-RTT estimate: noise only lowers it, so no queueing is ever taken for network.
 * - `connect`: else, the least TCP handshake of the connections the run opened (one round trip).
 */
export interface RoundTrip {
  ms: number
  source: 'first-byte' | 'connect'
}

export function runRoundTrip(levels: readonly Level[]): RoundTrip | null {
  const firstByte = least(levels.map((level) => level.in_band?.queue_ms.min ?? null))
  // A floor below 0 (a clock step, a server whose prompt_ms counts more than the prefill) says nothing of the network.
  if (firstByte !== null) return { ms: Math.max(0, firstByte), source: 'first-byte' }
  const connect = least(levels.map((level) => level.network?.connect_ms.min ?? null))
  return connect === null ? null : { ms: connect, source: 'connect' }
}

/** How it was measured, in words: "a 41 ms round trip (the least TTFT − server prefill)". */
export function describeRoundTrip(roundTrip: RoundTrip): string {
  const how =
    roundTrip.source === 'first-byte' ? 'the least client TTFT − server prefill' : 'the least TCP connect'
  return `${roundTrip.ms.toFixed(0)} ms round trip (${how})`
}

function least(values: readonly (number | null)[]): number | null {
  let low: number | null = null
  for (const value of values) if (value !== null && (low === null || value < low)) low = value
  return low
}
