import type { BenchResult } from '../result/bench-result.js'

/**
 * The control beside the saturation line: "Drift: the environment drifted: ..." when the first level
 * measured again at the end moved beyond its intervals (the knee and verdicts are then uncertain),
 * "Control: ... matches" when it did not; null when no control was run.
 */
export function driftLine(result: BenchResult): string | null {
  const drift = result.drift
  if (drift === undefined) return null
  return drift.moved ? `Drift: ${drift.reason}` : `Control: ${drift.reason}`
}
