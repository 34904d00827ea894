import { type DriftFigures, FIGURES, RELATIVE_FLOOR } from '../../analysis/drift.js'
import { CONTROL_MIN_REQUESTS, CONTROL_MIN_SECONDS, controlRequests } from './level-plan.js'

/** The drift control's time: at most this share of the levels measured before it (issue 40). */
export const CONTROL_RUN_SHARE = 0.1

/**
 * The drift the control is sized to see in 80% of runs: one and a half times the smallest change
 * drift.ts counts (RELATIVE_FLOOR). At the floor itself no size would do: the control's median falls
 * short of it half the time however many requests it has.
 */
export const DRIFT_TO_TELL = 1.5 * RELATIVE_FLOOR

/** The drift control as sized for this run: its requests, its time cap, and why, for the plan line. */
export interface ControlSize {
  requests: number
  seconds: number
  why: string
}

/** What the control is sized from: the first level as measured, and the run so far. */
export interface ControlNeed {
  /** The first level's requests in one run of it. */
  perRun: number
  streams: number
  /** One run of the first level, seconds. */
  firstSeconds: number
  /** Every level measured before the control, seconds. */
  runSeconds: number
  first: DriftFigures
}

/**
 * The smallest control that can tell a drift of the size analysis/drift.ts counts (DRIFT_TO_TELL, just
 * past its floor of a tenth of the first level's median): the control's median interval and the first
 * level's must come apart at that shift, in 80% of runs (`tells`). An order-statistic interval of the median
 * narrows as 1/√n, so the control's is read from the first level's own (relative half-width w at n
 * requests) as w scaled by the quantiles each interval reaches (`quantileReach`), about √(n/m). Sized on the figure that needs the most
 * among those where such a drift clears the figure's absolute floor (elsewhere it could not count
 * whatever the size). Never more than a third of the level (the prompts reserved for it), never fewer
 * than CONTROL_MIN_REQUESTS or one per stream; cut at a tenth of the run so far (CONTROL_MIN_SECONDS
 * at least) and at the first level's own time, whichever comes first.
 */
export function sizeControl(need: ControlNeed): ControlSize {
  const most = controlRequests(need.perRun, need.streams)
  const least = Math.min(need.perRun, Math.max(CONTROL_MIN_REQUESTS, need.streams))
  const seconds = Math.min(
    Math.max(CONTROL_MIN_SECONDS, need.firstSeconds),
    // A short run's tenth would leave the control too few requests to compare: 5 s stays its floor.
    Math.max(CONTROL_MIN_SECONDS, CONTROL_RUN_SHARE * need.runSeconds),
  )
  const cap = `at most ${seconds.toFixed(0)} s: a tenth of the run so far, 5 s at least`
  const widest = widestFigure(need.first)
  if (widest === null)
    return {
      requests: most,
      seconds,
      why: `no figure of the first level can show a ${percent(DRIFT_TO_TELL)} drift above its floor: a third of the level, ${cap}`,
    }
  const { name, halfWidth, count } = widest
  const told = `to tell a ${percent(DRIFT_TO_TELL)} drift of ${name} (its median ±${percent(halfWidth)} over ${count} requests)`
  if (!tells(halfWidth, count, most))
    return {
      requests: most,
      seconds,
      why: `the first level's ${name} is too spread ${told.slice(3)}: a third of the level, ${cap}`,
    }
  let requests = least
  while (requests < most && !tells(halfWidth, count, requests)) requests++
  return { requests, seconds, why: `sized ${told}, ${cap}` }
}

/** z of the 95% intervals drift.ts compares, and of the power the control is sized for (80%). */
const Z_INTERVAL = 1.96
const Z_POWER = 0.84

/**
 * Whether `control` requests see a drift of DRIFT_TO_TELL in 80% of runs: it counts when the medians
 * differ by more than both half-widths (the intervals come apart) and than RELATIVE_FLOOR, and the medians' difference is spread by
 * both medians' standard errors (a half-width over Z_INTERVAL; a control's as the first level's × √(n/m)).
 */
function tells(halfWidth: number, count: number, control: number): boolean {
  const controlHalfWidth = (halfWidth * quantileReach(control)) / quantileReach(count)
  const spread = Math.hypot(halfWidth, controlHalfWidth) / Z_INTERVAL
  return DRIFT_TO_TELL - Z_POWER * spread >= Math.max(RELATIVE_FLOOR, halfWidth + controlHalfWidth)
}

/**
 * How far, in quantiles, an order-statistic 95% interval of the median of `n` reaches either side:
 * Z·√n/2 ranks, rounded out to whole ranks (+1), over n. About Z/(2√n) for many requests, wider for
 * few, as the interval drift.ts reads (metrics/intervals.ts) is.
 */
function quantileReach(n: number): number {
  return (Math.ceil((Z_INTERVAL * Math.sqrt(n)) / 2) + 1) / n
}

/** The compared figure whose median interval is the widest, relative to the median; null when none can count a drift. */
function widestFigure(first: DriftFigures): { name: string; halfWidth: number; count: number } | null {
  let widest: { name: string; halfWidth: number; count: number } | null = null
  for (const figure of FIGURES) {
    const median = first[figure.key]
    if (median === null || !(median.p50 > 0)) continue
    if (DRIFT_TO_TELL * median.p50 < figure.floor) continue
    const halfWidth = Math.max(median.high - median.p50, median.p50 - median.low) / median.p50
    if (widest === null || halfWidth > widest.halfWidth)
      widest = { name: figure.name, halfWidth, count: median.count }
  }
  return widest
}

const percent = (share: number): string => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`
