import type { Comparison } from '../compare/compare.js'

/** One gated figure of a --paired comparison at one level: B/A of each pair, in time order (null: A was 0). */
export interface PairRatioRow {
  level: number
  metric: string
  ratios: (number | null)[]
}

/**
 * A --paired comparison's gated figures pair by pair, B/A in time order: drift that hit both sides
 * of a pair shows as ratios that stay put while the figures themselves move. Empty for two runs.
 */
export function pairRatioRows(comparison: Comparison): PairRatioRow[] {
  return comparison.levels.flatMap((level) =>
    level.metrics
      .filter((metric) => metric.threshold !== null && metric.pairs !== undefined)
      .map((metric) => ({
        level: level.value,
        metric: metric.metric,
        ratios: (metric.pairs ?? []).map(([a, b]) => (a === 0 ? null : b / a)),
      })),
  )
}

/** A ratio as the terminal, Markdown and HTML show it: two decimals, "-" where A was 0. */
export function ratioText(ratio: number | null): string {
  return ratio === null ? '-' : ratio.toFixed(2)
}

/** One line per level and figure, as the terminal prints them ("level 4 tpot_p50 B/A by pair: 1.02 0.98 1.01 1.03"). */
export function pairRatioLines(comparison: Comparison): string[] {
  return pairRatioRows(comparison).map(
    (row) => `level ${row.level} ${row.metric} B/A by pair: ${row.ratios.map(ratioText).join(' ')}`,
  )
}

/** The words above the pairs' table in Markdown and HTML: what the ratios show. */
export const PAIR_RATIOS_TITLE = 'Pairs over time: B/A of each gated figure, pair by pair in time order'
export const PAIR_RATIOS_NOTE =
  'Drift that hit both sides of a pair leaves its ratio put while the figures themselves move; a real change moves every ratio alike.'

/** The pairs as a Markdown table (level, figure, pair 1..n), or nothing for a comparison of two runs. */
export function pairRatioMarkdown(comparison: Comparison): string[] {
  const rows = pairRatioRows(comparison)
  if (rows.length === 0) return []
  const width = Math.max(...rows.map((row) => row.ratios.length))
  const pairs = Array.from({ length: width }, (_, i) => `pair ${i + 1}`)
  return [
    '',
    `**${PAIR_RATIOS_TITLE}.** ${PAIR_RATIOS_NOTE}`,
    '',
    `| level | figure | ${pairs.join(' | ')} |`,
    `|${' --- |'.repeat(width + 2)}`,
    ...rows.map(
      (row) =>
        `| ${row.level} | ${row.metric} | ${pairs.map((_, i) => ratioText(row.ratios[i] ?? null)).join(' | ')} |`,
    ),
  ]
}
