import { counterIncrease } from './bucket-percentiles.js'

/**
 * A counter's increase over a level's measured window only. The scrapes around a window are up to an
 * interval away from its edges, and what the server counted there belongs to other requests: the
 * level's warm-up burst just before its first measured send, its cool-down and drain after the last
 * measured end (2976–3360 generated tokens counted against 2880 measured). So the edges are estimated:
 *
 * - With two or more scrapes inside the window, the increase between the first and the last of them
 *   is exact, and each edge's stretch (window start to the first scrape inside, the last one to the
 *   window end) is counted at the mean rate inside: the rate of the measured load, not of a warm-up
 *   burst outside. Each edge's share is capped at what the server counted over the whole stretch
 *   from the scrape before the window (or to the one after), so a server that went idle is not
 *   credited with more than it did; with no scrape beyond an edge, that edge adds nothing.
 * - With fewer, the counter is read at both edges by linear interpolation between the scrapes around
 *   each edge (a steady rate between two scrapes); without a scrape on one side, the nearest scrape
 *   stands for that edge.
 *
 * Requests of the warm-up or cool-down that ran inside the window are still counted: the server's
 * counters do not say whose tokens they were.
 */

/** One scrape's reading of a counter: `at` is when the server read it (ms, the run clock). */
export interface CounterReading {
  at: number
  value: number
}

export interface Window {
  start: number
  end: number
}

/** The counter's increase over the window, from readings sorted by time; null with fewer than two. */
export function windowIncrease(readings: readonly CounterReading[], window: Window): number | null {
  if (readings.length < 2) return null
  const inside = readings.filter((r) => r.at >= window.start && r.at <= window.end)
  const first = inside[0]
  const last = inside.at(-1)
  if (first !== undefined && last !== undefined && last.at > first.at) {
    const inner = counterIncrease(inside.map((r) => r.value))
    const rate = inner / (last.at - first.at)
    const before = readings.filter((r) => r.at < window.start).at(-1)
    const after = readings.find((r) => r.at > window.end)
    const head = capped(rate * (first.at - window.start), before, first)
    const tail = capped(rate * (window.end - last.at), last, after)
    return inner + head + tail
  }
  return Math.max(0, interpolated(readings, window.end) - interpolated(readings, window.start))
}

/**
 * An edge's estimate, at most what the counter did between the scrapes around the edge; nothing
 * without a scrape beyond the edge (the nearest scrape stands for it, as below).
 */
function capped(estimate: number, from: CounterReading | undefined, to: CounterReading | undefined): number {
  if (from === undefined || to === undefined) return 0
  return Math.min(estimate, counterIncrease([from.value, to.value]))
}

/**
 * The counter's cumulative increase since the first reading, at time t: linear between the readings
 * around t (resets counted as counterIncrease counts them), the nearest reading's outside them.
 */
function interpolated(readings: readonly CounterReading[], t: number): number {
  let total = 0
  for (let i = 1; i < readings.length; i++) {
    const from = readings[i - 1] as CounterReading
    const to = readings[i] as CounterReading
    if (t <= from.at) return total
    const step = counterIncrease([from.value, to.value])
    if (t < to.at) return total + (step * (t - from.at)) / (to.at - from.at)
    total += step
  }
  return total
}
