import { round } from '../metrics/distribution.js'
import type { LevelSlo } from '../metrics/slo.js'
import type { LoadMode } from '../metrics/summarize.js'
import { crossing, pchip } from './pchip.js'
import type { Saturation } from './saturation.js'

/**
 * --search: the highest load that meets the SLOs (or the knee, without SLOs) in few levels. First a
 * bracket: from the lowest level of the range, doubling, up to its top, until a level misses the SLOs
 * (or a knee is placed). Then, between the highest level that met them and the lowest that did not,
 * a probe where the measured curve crosses the objectives (monotone cubic interpolation of each
 * level's worst objective ratio, as vLLM's `serve_sla` solves on a PCHIP), kept in the middle half of
 * the bracket so it shrinks by a quarter at least, while the bracket is wider than four tolerances;
 * then bisection, until the bracket is within the tolerance. The knee is bisected: a plateau gives
 * interpolation nothing to solve on.
 */

export type SearchTarget = 'slo' | 'knee'

/** What the run searched for, and where: meta.load.search. */
export interface SearchPlan {
  target: SearchTarget
  /** The lowest and highest level the search may run. */
  range: [number, number]
  /** The bracket's width at which the search stops, in the level's unit. */
  tolerance: number
}

/** The search's answer (result.search). */
export interface SearchOutcome {
  target: SearchTarget
  /** The highest level that met every SLO below the first that did not, or the knee; null when none. */
  value: number | null
  /** The highest level that met the target and the lowest that did not (null: none was run on that side). */
  bracket: [number | null, number | null]
  /** Whether the bracket closed within the tolerance (or the answer lies at an end of the range). */
  converged: boolean
  tolerance: number
  /** Levels the search ran (the ladder's and the probes'). */
  levels: number
  summary: string
  /**
   * Why the answer may not hold: the server changed during the search (the drift control, which
   * repeats the first level after the last, moved), so levels measured early and late disagree.
   * Absent when nothing says so.
   */
  uncertain?: string
  /**
   * The SLO search's answer measured again after the search (records of phase `recheck`): whether
   * it still meets every SLO. Absent when it was not measured again (a knee search, no answer, interrupted).
   */
  recheck?: { level: number; requests: number; slo_met: boolean }
}

/** The answer's level measured again at the end of an SLO search (its records' summary). */
export interface SearchRecheck {
  value: number
  requests: number
  slo: LevelSlo | null
}

/** What a probe needs of a level. */
export interface SearchLevel {
  value: number
  slo: LevelSlo | null
  interrupted?: boolean
  /** The level's TTFT percentiles, ms (p95, else the mean, tells a queue). */
  ttft_ms?: Record<string, number | null>
}

/** TTFT this many times the knee's at the highest level: requests queue there, it is past the knee. */
const QUEUED_TTFT_RATIO = 3

/** Brackets wider than this many tolerances are probed where the curve crosses; narrower ones bisected. */
const INTERPOLATE_ABOVE = 4

/** Probes after the bracket at most: a bracket shrinks by a quarter at least each, 8 close 10x. */
export const MAX_SEARCH_PROBES = 8

/**
 * A search across a server that changed: a server degrading mid-search still gave a converged "4
 * meet, 5 do not" (issue 36). The answer's level was measured minutes before the search ended; it
 * is measured again at the end, and when it no longer meets the SLOs the answer is uncertain (an
 * earlier level no longer holds). A recheck that still meets them is stated as such.
 */
export function withRecheck(outcome: SearchOutcome, recheck: SearchRecheck | null): SearchOutcome {
  if (recheck === null || recheck.slo === null || outcome.target !== 'slo' || outcome.value !== recheck.value)
    return outcome
  const measured = { level: recheck.value, requests: recheck.requests, slo_met: recheck.slo.meets }
  if (recheck.slo.meets)
    return {
      ...outcome,
      recheck: measured,
      summary: `${outcome.summary}; ${recheck.value} measured again at the end still meets them`,
    }
  const missed = recheck.slo.checks
    .filter((check) => !check.met)
    .map(
      (check) =>
        `${check.key} ${check.value_ms === null ? 'not measured' : round(check.value_ms, 1)} against ${check.threshold_ms}`,
    )
    .join(', ')
  const reason = `${recheck.value} met every SLO during the search and missed them when measured again at the end (${missed}): the server changed during the search`
  return {
    ...outcome,
    recheck: measured,
    uncertain: outcome.uncertain === undefined ? reason : `${outcome.uncertain}; ${reason}`,
    summary:
      outcome.uncertain === undefined
        ? `${outcome.summary}; uncertain: ${reason}, re-run it before relying on the answer`
        : `${outcome.summary}; ${reason}`,
  }
}

/** The bracket's ladder: the range's lowest level, doubling, then its highest. */
export function bracketLadder(range: readonly [number, number]): number[] {
  const [low, high] = range
  const ladder: number[] = []
  for (let value = low; value < high; value *= 2) ladder.push(value)
  ladder.push(high)
  return ladder
}

/** The tolerance when none is given: one stream, or a twentieth of the range's top in requests per second. */
export function defaultTolerance(mode: LoadMode, range: readonly [number, number]): number {
  return mode === 'concurrency' ? 1 : Math.max(0.01, Number((range[1] / 20).toPrecision(2)))
}

/** Where the SLO search stands: the highest level meeting them below the lowest that misses them. */
export function sloBracket(levels: readonly SearchLevel[]): [number | null, number | null] {
  const judged = levels
    .filter((level) => level.interrupted !== true && level.slo !== null)
    .sort((a, b) => a.value - b.value)
  const miss = judged.findIndex((level) => level.slo?.meets === false)
  if (miss < 0) return [judged.at(-1)?.value ?? null, null]
  return [miss === 0 ? null : (judged[miss - 1] as SearchLevel).value, (judged[miss] as SearchLevel).value]
}

/** Where the knee search stands: the knee's bracket (the knee and the next level up without one). */
export function kneeBracket(
  levels: readonly SearchLevel[],
  saturation: Saturation | null,
): [number | null, number | null] {
  if (saturation === null) return [levels.map((level) => level.value).sort((a, b) => b - a)[0] ?? null, null]
  if (saturation.bracket != null) return saturation.bracket
  const above = levels.map((level) => level.value).filter((value) => value > saturation.value)
  return [saturation.value, above.length === 0 ? null : Math.min(...above)]
}

function bracketOf(
  plan: SearchPlan,
  levels: readonly SearchLevel[],
  saturation: Saturation | null,
): [number | null, number | null] {
  return plan.target === 'slo' ? sloBracket(levels) : kneeBracket(levels, saturation)
}

/**
 * Whether the ladder can stop climbing: a level above the answer has been run. For the knee, the
 * highest level must also be past it by evidence that does not depend on where the knee is: the
 * server's gauges saw a level full, or the highest level's TTFT is QUEUED_TTFT_RATIO times the
 * knee's. A knee placed on the first two levels of a slowly scaling engine (llama.cpp on one thread:
 * +20% and TTFT x1.2 from 1 to 2) moves once a level fills its slots, which only a level beyond them shows.
 */
export function bracketed(
  plan: SearchPlan,
  levels: readonly SearchLevel[],
  saturation: Saturation | null,
): boolean {
  if (bracketOf(plan, levels, saturation)[1] === null) return false
  if (plan.target === 'slo') return true
  if (saturation?.full_from !== undefined) return true
  const ttft = (level: SearchLevel | undefined): number | null =>
    level?.ttft_ms?.p95 ?? level?.ttft_ms?.mean ?? null
  const top = ttft([...levels].sort((a, b) => b.value - a.value)[0])
  const knee = ttft(levels.find((level) => level.value === saturation?.value))
  return top !== null && knee !== null && knee > 0 && top >= QUEUED_TTFT_RATIO * knee
}

/**
 * The next level to probe, or null when the search is done (bracket within the tolerance, not
 * bracketed, or nothing left between its ends that was not run). Concurrency probes are whole streams.
 */
export function nextProbe(
  plan: SearchPlan,
  mode: LoadMode,
  levels: readonly SearchLevel[],
  saturation: Saturation | null,
): { value: number; how: 'interpolated' | 'bisected' } | null {
  const [low, high] = bracketOf(plan, levels, saturation)
  if (low === null || high === null || high - low <= plan.tolerance) return null
  const whole = mode === 'concurrency'
  const fit = (value: number): number | null => {
    const placed = whole
      ? Math.min(high - 1, Math.max(low + 1, Math.round(value)))
      : Number(value.toPrecision(3))
    const fresh = placed > low && placed < high && !levels.some((level) => level.value === placed)
    return fresh ? placed : null
  }
  const width = high - low
  // In a narrow bracket bisection is as quick and does not bet on a smooth curve: a server's latency
  // jumps at its slots, where a cubic through the levels around it puts the crossing too high
  // (llama.cpp, 4 slots, bracket 4–8: the curve said 7, then 6, then 5, where 6 then 5 would do).
  const interpolate = plan.target === 'slo' && width > INTERPOLATE_ABOVE * plan.tolerance
  const root = interpolate ? sloCrossing(levels, low, high, plan.tolerance) : null
  if (root !== null) {
    const kept = Math.min(high - width / 4, Math.max(low + width / 4, root))
    const value = fit(kept)
    if (value !== null) return { value, how: 'interpolated' }
  }
  const value = fit((low + high) / 2)
  return value === null ? null : { value, how: 'bisected' }
}

/**
 * Where the levels' worst objective ratio (a percentile over its threshold, the one furthest over)
 * crosses 1 between `low` and `high`, on a monotone cubic through every level measured (in logs: a
 * queue's latency grows about geometrically past the capacity); null without two levels to go on or
 * no crossing there.
 */
function sloCrossing(
  levels: readonly SearchLevel[],
  low: number,
  high: number,
  tolerance: number,
): number | null {
  const points = levels
    .filter((level) => level.interrupted !== true)
    .map((level) => ({ x: level.value, y: worstRatio(level.slo) }))
    .filter((point): point is { x: number; y: number } => point.y !== null)
    .sort((a, b) => a.x - b.x)
  if (points.length < 2) return null
  const curve = pchip(
    points.map((point) => point.x),
    points.map((point) => Math.log(point.y)),
  )
  return crossing(curve, low, high, tolerance / 20)
}

function worstRatio(slo: LevelSlo | null): number | null {
  if (slo === null || slo.checks.length === 0) return null
  let worst = 0
  for (const check of slo.checks) {
    if (check.value_ms === null || !(check.value_ms > 0) || !(check.threshold_ms > 0)) return null
    // How far past its threshold, either way round: a fluidity below its floor is over by floor / value.
    worst = Math.max(
      worst,
      check.at_least ? check.threshold_ms / check.value_ms : check.value_ms / check.threshold_ms,
    )
  }
  return worst
}

/** The search's answer from the levels run (a pure function: `report` gives what `run` gave). */
export function searchOutcome(
  plan: SearchPlan,
  mode: LoadMode,
  levels: readonly SearchLevel[],
  saturation: Saturation | null,
): SearchOutcome {
  const [low, high] = bracketOf(plan, levels, saturation)
  const unit = (value: number): string =>
    `${value} ${mode === 'concurrency' ? (value === 1 ? 'stream' : 'streams') : 'requests/s'}`
  const within = `within ${unit(plan.tolerance)}`
  const ran = `${levels.length} level${levels.length === 1 ? '' : 's'} run`
  const closed = low !== null && high !== null && high - low <= plan.tolerance
  const top = plan.range[1]
  const base = { target: plan.target, tolerance: plan.tolerance, levels: levels.length }
  if (plan.target === 'knee') {
    const value = saturation?.value ?? null
    const summary =
      value === null
        ? `no knee up to ${unit(Math.max(...levels.map((level) => level.value)))} (${ran})`
        : `knee at ${unit(value)}, between ${low} and ${high ?? 'the top'}${closed ? ` (${within})` : `, wider than the tolerance (${plan.tolerance})`}; ${ran}`
    return { ...base, value, bracket: [low, high], converged: value === null || closed, summary }
  }
  if (high === null) {
    const summary =
      low === null
        ? `no level was judged against the SLOs (${ran})`
        : `every level up to ${unit(low)} met the SLOs${low >= top ? ': the capacity is above the range searched (raise its top)' : ''}; ${ran}`
    return { ...base, value: low, bracket: [low, null], converged: low !== null && low >= top, summary }
  }
  if (low === null) {
    const summary = `the lowest level, ${unit(high)}, misses the SLOs: the capacity is below the range searched; ${ran}`
    return { ...base, value: null, bracket: [null, high], converged: high <= plan.range[0], summary }
  }
  const summary = closed
    ? `${unit(low)} meet every SLO and ${high} do not (${within}); ${ran}`
    : `${unit(low)} meet every SLO and ${high} do not; the bracket is wider than the tolerance (${plan.tolerance}): the search stopped early; ${ran}`
  return { ...base, value: low, bracket: [low, high], converged: closed, summary }
}
