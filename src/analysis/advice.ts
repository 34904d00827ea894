import type { LevelSummary } from '../metrics/summarize.js'
import { type Engine, engineSetting } from './engine-settings.js'
import type { Saturation } from './saturation.js'

/** Below this many output tokens, connection set-up and first-token time dominate throughput. */
export const MIN_THROUGHPUT_OUTPUT_TOKENS = 64

type Level = Pick<LevelSummary, 'value' | 'verdict'>

/**
 * The level to run next to place the knee more precisely: the integer midpoint of the knee's bracket
 * (the knee and the next level tried, or the level below and the knee when it is uncertain), or
 * between the last healthy level and the first overloaded one; null when the two are adjacent or
 * there is no knee to place.
 */
export function refinementLevel(levels: readonly Level[], saturation: Saturation | null): number | null {
  const sorted = [...levels].sort((a, b) => a.value - b.value)
  let low: number | null = null
  let high: number | null = null
  if (saturation?.bracket) {
    ;[low, high] = saturation.bracket
  } else if (saturation !== null) {
    const knee = saturation.value
    low = knee
    high = sorted.find((level) => level.value > knee)?.value ?? null
  } else {
    const firstBad = sorted.findIndex((level) => level.verdict === 'overloaded')
    if (firstBad > 0) {
      low = (sorted[firstBad - 1] as Level).value
      high = (sorted[firstBad] as Level).value
    }
  }
  if (low === null || high === null || high - low < 2) return null
  return Math.round((low + high) / 2)
}

/** What the run itself says about how it was run: the checks a person would make on its figures, automated. */
export function runAdvice(
  levels: readonly Level[],
  saturation: Saturation | null,
  outputTokens: number | null,
  server: { slots: number | null; engine: Engine | null } | null = null,
): string[] {
  const advice: string[] = []
  // The knee on the slots the server declared: the server is full, and its own flag says how to widen it.
  if (saturation !== null && server?.slots != null && saturation.value === server.slots) {
    advice.push(
      `the knee is the server's ${server.slots} slots: to serve more at once, look at ${engineSetting('batch-size', server.engine).replace(/^the batch size: /, '')}`,
    )
  }
  const next = refinementLevel(levels, saturation)
  if (next !== null) {
    const sorted = [...levels].map((level) => level.value).sort((a, b) => a - b)
    const high = sorted.find((c) => c > next) as number
    const low = [...sorted].reverse().find((c) => c < next) as number
    advice.push(
      `the ladder is too coarse to place the knee between ${low} and ${high}: add level ${next} ` +
        '(or run with --refine to bisect automatically)',
    )
  }
  if (outputTokens !== null && outputTokens < MIN_THROUGHPUT_OUTPUT_TOKENS) {
    advice.push(
      `outputs of ${outputTokens} tokens are short: connection set-up and time to first token dominate ` +
        `throughput; use at least ${MIN_THROUGHPUT_OUTPUT_TOKENS} output tokens for throughput figures`,
    )
  }
  return advice
}
