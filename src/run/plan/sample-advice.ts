import type { RunConfig } from '../../config/types.js'
import { parsePrecisionKey } from '../../metrics/precision-key.js'
import { logSpreadOfProbes, percentileHalfWidthPct, requestsForFigure } from '../../metrics/sample-size.js'
import { levelRequestBudget } from '../level/precision-watch.js'
import type { ProbeTiming } from '../setup/probe-timing.js'

/**
 * The plan's word on sample size, from the warm probes' spread: with --precision, about how many
 * requests each named figure needs (and whether the ceiling allows it); without, how precise the
 * run's TTFT percentiles will be at the requests per level it sends. A floor at the quiet server's
 * spread: queueing under load spreads latencies wider.
 */
export function sampleSizeAdvice(
  config: RunConfig,
  timing: ProbeTiming,
  percentiles: readonly number[],
): string | null {
  const { load } = config
  const floor = load.requests_per_level
  if (floor === null || config.workload.trace !== null) return null
  const spreads = {
    ttft: logSpreadOfProbes(timing.ttft_ms, timing.probes),
    tpot: logSpreadOfProbes(timing.tpot_ms, timing.probes),
    e2e: logSpreadOfProbes(timing.e2e_ms, timing.probes),
  }
  const basis = `from the warm probes' spread (TTFT ±${(100 * spreads.ttft).toFixed(0)}%), before queueing widens it`
  if (load.precision !== null) {
    const ceiling = levelRequestBudget(load) ?? floor
    const needs = Object.entries(load.precision).map(([key, pct]) => {
      const figure = parsePrecisionKey(key)
      if (typeof figure === 'string') return `${key}: ${figure}`
      const n = requestsForFigure(figure, pct, spreads)
      if (n === null)
        return `${key} ±${pct}%: no probe spread of ${figure.kind === 'percentile' ? figure.metric : key} to size it from`
      const fits = n > ceiling ? ` (above the ceiling of ${ceiling}: raise --max-requests)` : ''
      return `${key} ±${pct}% about ${Math.max(n, floor)}${fits}`
    })
    return `sample size: requests a level needs, ${basis}: ${needs.join(', ')}`
  }
  const reached = percentiles.map((p) => {
    const half = percentileHalfWidthPct(p, floor, spreads.ttft)
    return half === null
      ? `p${p} unbounded (too few requests for its interval)`
      : `p${p} ±${half.toFixed(0)}%`
  })
  return `sample size: ${floor} requests per level give TTFT ${reached.join(', ')}, ${basis}; --precision sizes levels to a target`
}
