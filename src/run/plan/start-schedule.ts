import type { StopSignal } from '../stop-signal.js'

/**
 * When each level starts, on the wall clock: level k at `start_at_ms + k × level_span_s`. Shards on
 * different machines share it, so they load the server together; a shard that is still busy at its
 * next slot starts that level late (and `merge` reports the poor overlap) rather than skipping it.
 */
export interface StartSchedule {
  /** Epoch ms of the first level. */
  start_at_ms: number
  /** Seconds between level starts; null = only the first level is scheduled, the rest follow at once. */
  level_span_s: number | null
}

/** A wait longer than this is a mistake (a start time in the wrong year), not a plan. */
export const MAX_START_WAIT_MS = 24 * 3600 * 1000

export { parseStartAt } from '../../schedule/start-time.js'

/** Resolves when level `index` may start (at once when its time has passed); returns early on Ctrl-C. */
export async function waitForLevelStart(
  schedule: StartSchedule,
  index: number,
  stop: StopSignal,
  log: (line: string) => void,
  now: () => number = Date.now,
): Promise<void> {
  if (index > 0 && schedule.level_span_s === null) return
  const at = schedule.start_at_ms + index * (schedule.level_span_s ?? 0) * 1000
  const wait = at - now()
  if (wait <= 0) {
    if (wait < -1000) log(`level ${index + 1} starts ${(-wait / 1000).toFixed(1)} s after its scheduled time`)
    return
  }
  log(`waiting ${(wait / 1000).toFixed(1)} s for the scheduled start (${new Date(at).toISOString()})`)
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, wait)
    const unregister = stop.onRequest(done)
    function done(): void {
      clearTimeout(timer)
      unregister()
      resolve()
    }
  })
}
