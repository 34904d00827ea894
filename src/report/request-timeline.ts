import { levelName } from '../metrics/level-name.js'
import type { RequestRecord } from '../records/types.js'
import type { BenchResult } from '../result/bench-result.js'

/** At most this many bars per level: more would be a solid block, and the SVG would grow with the run. */
export const MAX_TIMELINE_BARS = 80

/** One request as a bar: ms from the level's first send; first token null when none came. */
export interface TimelineBar {
  row: number
  sent: number
  first_token: number | null
  end: number
  /** cancelled: the client aborted it on purpose (--cancel-share). */
  outcome: 'ok' | 'failed' | 'cancelled'
}

/** The measured requests of one level on a common clock, sampled evenly when there are too many. */
export interface LevelTimeline {
  value: number
  name: string
  knee: boolean
  /** Measured requests at the level; bars.length < total when sampled. */
  total: number
  bars: TimelineBar[]
}

/**
 * Per level, each measured request from send to end with its first token (a pure function). Sorted by
 * send time; when a level has more than `max`, every (total/max)-th is kept, so the picture's shape (a
 * growing wait before the first token as the queue builds) survives the sampling.
 */
export function requestTimelines(
  result: BenchResult,
  records: readonly RequestRecord[],
  max = MAX_TIMELINE_BARS,
): LevelTimeline[] {
  const knee = result.saturation?.value ?? null
  return [...result.levels]
    .sort((a, b) => a.value - b.value)
    .flatMap((level) => {
      const measured = records
        .filter((record) => record.level === level.value && record.phase === 'measure')
        .sort((a, b) => a.sent_at - b.sent_at)
      if (measured.length === 0) return []
      const origin = measured[0]?.sent_at ?? 0
      const step = Math.max(1, measured.length / max)
      const sampled: RequestRecord[] = []
      for (let index = 0; Math.floor(index) < measured.length && sampled.length < max; index += step)
        sampled.push(measured[Math.floor(index)] as RequestRecord)
      const ms = (at: number): number => Math.round((at - origin) * 10) / 10
      return [
        {
          value: level.value,
          name: levelName(result.meta, level.value),
          knee: level.value === knee,
          total: measured.length,
          bars: sampled.map((record, row) => ({
            row,
            sent: ms(record.sent_at),
            first_token: record.first_token_at === null ? null : ms(record.first_token_at),
            end: ms(record.end_at),
            outcome: record.cancelled !== undefined ? 'cancelled' : record.error === null ? 'ok' : 'failed',
          })),
        },
      ]
    })
}
