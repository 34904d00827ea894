import { WAIT_TREND_Z } from '../metrics/open-loop-figures.js'
import type { LevelSummary } from '../metrics/summarize.js'

/**
 * An open loop (request-rate mode) above what the server can serve: arrivals keep coming on their
 * schedule, so the server falls further behind the longer the level runs, even when every request
 * still succeeds and latency from the send looks tolerable (the wait is in the queue). Judged on the
 * level's open_loop figures (metrics/open-loop-figures.ts), each side with its interval: served
 * below offered beyond the served rate's interval, or requests in flight grown with an interval above 0.
 */

type OpenLoopLevel = Pick<LevelSummary, 'open_loop'>

/** True when the server could not keep up with the offered rate; false when it did, or nothing says. */
export function openLoopOverloaded(level: OpenLoopLevel): boolean {
  const figures = level.open_loop
  if (figures == null) return false
  return (
    figures.served_per_s_high < figures.offered_per_s ||
    figures.in_flight_growth_low > 0 ||
    waitsKeptRising(figures)
  )
}

/**
 * Every arrival waited longer than the ones before it (a wait trend beyond noise) while fewer were
 * served than offered: the queue grew through the level. Below capacity, waits come and go with no
 * trend; a short level above it may not yet show the shortfall beyond the served rate's interval,
 * but the trend is there from the first seconds.
 */
function waitsKeptRising(figures: NonNullable<LevelSummary['open_loop']>): boolean {
  return (figures.wait_trend_z ?? 0) >= WAIT_TREND_Z && figures.served_per_s < figures.offered_per_s
}

/**
 * The figures that say so: "served 2.44/s (95% 1.90–3.10) of 4.50/s offered; in flight grew 6.1 →
 * 21.4 over 12.3 s". Null when the level kept up (or has no open-loop figures).
 */
export function openLoopShortfall(level: OpenLoopLevel): string | null {
  const figures = level.open_loop
  if (figures == null || !openLoopOverloaded(level)) return null
  const rate = (value: number) => value.toFixed(2)
  const count = (value: number) => value.toFixed(1)
  const served =
    `served ${rate(figures.served_per_s)}/s (95% ${rate(figures.served_per_s_low)}–${rate(figures.served_per_s_high)}) ` +
    `of ${rate(figures.offered_per_s)}/s offered`
  const moved = figures.in_flight_growth_low > 0 ? 'grew' : 'went'
  const inFlight = `in flight ${moved} ${count(figures.in_flight_first)} → ${count(figures.in_flight_last)}`
  const trend = waitsKeptRising(figures)
    ? `; each arrival waited longer than the last (wait trend z = ${(figures.wait_trend_z ?? 0).toFixed(1)})`
    : ''
  return `${served}; ${inFlight} over ${figures.window_s.toFixed(1)} s${trend}`
}

/** The advice of an overloaded open-loop level: what it could serve and where to look next. */
export function openLoopAdvice(level: OpenLoopLevel & Pick<LevelSummary, 'verdict'>): string | null {
  if (level.verdict !== 'overloaded') return null
  const shortfall = openLoopShortfall(level)
  if (shortfall === null) return null
  return `the server could not keep up: ${shortfall}; requests queue without bound at this rate: back off to a rate below the served one`
}
