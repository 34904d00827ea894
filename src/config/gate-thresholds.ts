import { keysFor, measureOf, parseFigureKey } from '../metrics/measures.js'

/**
 * The gate's thresholds as text, read once for both places that take them: `compare
 * --max-regression/--min-change` and `run --paired --gate` with the same flags (issue 38). Each
 * reader returns the values, or the reason it could not read them (the caller says where they came from).
 */

/** The gates besides the compared measures' percentiles (measures.ts). */
const OTHER_GATES = new Set(['throughput', 'success_rate', 'fluidity_p90', 'tail', 'knee'])

/** What --max-regression takes, for a refusal. */
export const GATES_EXPECTED =
  'KEY=N% pairs (keys like ttft_p95, e2e_p99, throughput, success_rate, fluidity_p90, tail, knee)'

/** "ttft_p95=10%,success_rate=1pts" → { ttft_p95: 0.1, success_rate: 0.01 }; a string says what was wrong. */
export function readGates(text: string): Record<string, number> | string {
  const gates: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const match = /^\s*([a-z_0-9]+)\s*=\s*(\d+(?:\.\d+)?)\s*(%|pts)?\s*$/.exec(pair)
    const key = match?.[1]
    if (
      match === null ||
      key === undefined ||
      !(parseFigureKey(key, 'compare') !== null || OTHER_GATES.has(key))
    )
      return `expected ${GATES_EXPECTED}, got ${JSON.stringify(pair)}`
    gates[key] = Number(match[2]) / 100
  }
  return gates
}

/** What --min-change takes, for a refusal. */
export function floorsExpected(): string {
  return `KEY=N pairs (${keysFor('compare')} or a percentile like ttft_p99 in ms; throughput in tok/s)`
}

/** "tpot=0.5ms,throughput=2tok/s" → { tpot: 0.5, throughput: 2 }; a string says what was wrong. */
export function readFloors(text: string): Record<string, number> | string {
  const floors: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const match = /^\s*([a-z_0-9.]+)\s*=\s*(\d+(?:\.\d+)?)\s*(ms|tok\/s)?\s*$/.exec(pair)
    const key = match?.[1]
    const unit = match?.[3]
    const latency =
      key !== undefined && (measureOf(key)?.compare === true || parseFigureKey(key, 'compare') !== null)
    if (
      match === null ||
      key === undefined ||
      !(latency || key === 'throughput') ||
      (unit !== undefined && unit !== (latency ? 'ms' : 'tok/s'))
    )
      return `expected ${floorsExpected()}, got ${JSON.stringify(pair)}`
    floors[key] = Number(match[2])
  }
  return floors
}
