import type { LevelComparison } from './compare.js'

/**
 * What a pass covers. A regression is a change whose whole interval is worse than its threshold, so
 * a pass says only that no interval was; with few pairs or a noisy host an interval can reach far
 * past its threshold, and a change that large would have passed too (issue 38: an A/A paired run on
 * the kit under a busy neighbour passed with TPOT intervals of −110% … +92%). The widest one, against
 * its own threshold, is the change the gate could have missed; the report says it beside the pass.
 */
export interface Resolution {
  value: number
  metric: string
  /** The worst change the interval leaves possible (a relative change, or points for a share). */
  worst_case: number
  threshold: number
}

/** The gated figure whose interval leaves the largest worsening possible, relative to its threshold; null without one. */
export function resolutionOf(levels: readonly LevelComparison[]): Resolution | null {
  let widest: Resolution | null = null
  for (const level of levels)
    for (const metric of level.metrics) {
      const { worst_case: worst, threshold } = metric
      if (worst == null || threshold === null || threshold <= 0 || metric.not_gated !== null) continue
      if (widest === null || worst / threshold > widest.worst_case / widest.threshold)
        widest = { value: level.value, metric: metric.metric, worst_case: worst, threshold }
    }
  return widest
}
