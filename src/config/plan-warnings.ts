import type { RunConfig } from './types.js'

/**
 * A count-bounded closed-loop level needs about this many requests per stream to hold its streams
 * for most of its window: all streams start at once, and once the last requests are sent the
 * streams run dry one by one, so a level with fewer requests spends much of its window ramping
 * and draining, and one with fewer requests than streams never reaches its concurrency.
 */
export const UNDER_DRIVEN_FACTOR = 3

/**
 * Said before the run: the levels of a count-bounded closed-loop plan with fewer than
 * UNDER_DRIVEN_FACTOR requests per stream, and the --requests that would drive them; null when
 * every level is driven (or the plan is timed, or open-loop).
 */
export function underDrivenWarning(load: RunConfig['load']): string | null {
  const requests = load.requests_per_level
  if (load.mode !== 'concurrency' || requests === null || load.duration_per_level_s !== null) return null
  const short = load.levels.filter((level) => requests < UNDER_DRIVEN_FACTOR * level)
  if (short.length === 0) return null
  const needed = UNDER_DRIVEN_FACTOR * Math.max(...short)
  const never = short.filter((level) => requests < level)
  return (
    `warning: ${requests} requests per level is under ${UNDER_DRIVEN_FACTOR} per stream at level${short.length > 1 ? 's' : ''} ` +
    `${short.join(',')}: ${never.length > 0 ? `${never.join(',')} can never have all its streams in flight, and ` : ''}` +
    `ramp-up and drain take much of the window; set --requests ${needed} or more (or --duration)`
  )
}
