import type { LevelSummary } from '../metrics/summarize.js'

export interface Saturation {
  concurrency: number
  reason: string
}

/** Below this share of linear scaling, more streams no longer buy meaningful throughput. */
export const MIN_SCALING_EFFICIENCY = 0.25
/** TTFT must climb at least this much over the same step for the flat throughput to be a knee. */
export const MIN_TTFT_RATIO = 1.5

type LevelFigures = Pick<LevelSummary, 'concurrency' | 'output_tokens_per_s' | 'ttft_ms' | 'success_rate'>

/**
 * The knee of the gradient: the highest level before which adding concurrency still paid. Walks
 * consecutive levels a → b and stops at the first step where throughput grew by less than a
 * quarter of what linear scaling would give ((T_b/T_a - 1) / (b/a - 1) < 0.25) while TTFT p95
 * rose by at least 1.5x, or where the success rate fell. Returns null when no step qualifies: the
 * server is not saturated within the levels tried.
 */
export function findSaturation(levels: readonly LevelFigures[], ttftKey = 'p95'): Saturation | null {
  const sorted = [...levels].sort((x, y) => x.concurrency - y.concurrency)
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1] as LevelFigures
    const b = sorted[i] as LevelFigures
    if (a.output_tokens_per_s <= 0) continue
    const gain = b.output_tokens_per_s / a.output_tokens_per_s - 1
    const ideal = b.concurrency / a.concurrency - 1
    const ttftA = a.ttft_ms[ttftKey] ?? a.ttft_ms.mean
    const ttftB = b.ttft_ms[ttftKey] ?? b.ttft_ms.mean
    const ttftRatio = ttftA && ttftB ? ttftB / ttftA : 1
    const throughputWords = `throughput ${signedPercent(gain)} from ${a.concurrency} to ${b.concurrency}`
    if (b.success_rate < a.success_rate && b.success_rate < 0.99) {
      return {
        concurrency: a.concurrency,
        reason: `${throughputWords} while success rate fell from ${percent(a.success_rate)} to ${percent(b.success_rate)}`,
      }
    }
    if (gain / ideal < MIN_SCALING_EFFICIENCY && ttftRatio >= MIN_TTFT_RATIO) {
      return {
        concurrency: a.concurrency,
        reason: `${throughputWords} while TTFT ${ttftKey} x${ttftRatio.toFixed(1)}`,
      }
    }
  }
  return null
}

function signedPercent(fraction: number): string {
  const value = Math.round(fraction * 100)
  return `${value >= 0 ? '+' : ''}${value}%`
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}
