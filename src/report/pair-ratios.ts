import type { Comparison } from '../compare/compare.js'

/**
 * A --paired comparison's gated figures pair by pair, B/A in time order, one line per level and
 * figure ("level 4 tpot_p50 B/A by pair: 1.02 0.98 1.01 1.03"): drift that hit both sides of a pair
 * shows as ratios that stay put while the figures themselves move.
 */
export function pairRatioLines(comparison: Comparison): string[] {
  return comparison.levels.flatMap((level) =>
    level.metrics
      .filter((metric) => metric.threshold !== null && metric.pairs !== undefined)
      .map(
        (metric) =>
          `level ${level.value} ${metric.metric} B/A by pair: ${(metric.pairs ?? [])
            .map(([a, b]) => (a === 0 ? '-' : (b / a).toFixed(2)))
            .join(' ')}`,
      ),
  )
}
