import { isOk } from '../metrics/derive.js'
import type { RequestRecord } from '../records/types.js'

/** One request's decode: when it ran (first to last token, run clock ms) and its median token gap. */
interface DecodeSpan {
  from: number
  to: number
  medianGapMs: number
}

/** One request's decode step against the batch it decoded in. */
export interface DecodePoint {
  batch: number
  stepMs: number
}

/** Fewest gaps a request needs for its median to be a step, not a stall. */
const MIN_GAPS = 4

/**
 * The decode evidence of a run, fed record by record: for each measured request that streamed its
 * tokens, its median gap between tokens (one decode step; the median passes over the odd gap a
 * prefill stalls) and when it decoded. The batch it decoded in is then read off the client's own
 * timeline: the mean number of the level's requests decoding at once over its decode window, itself
 * included. One point per request, so the step's growth with the batch is fitted on hundreds of points
 * spread over every batch size the levels passed through, not on one mean per level.
 */
export class DecodeEvidence {
  private readonly byLevel = new Map<number, DecodeSpan[]>()

  add(record: RequestRecord): void {
    if (record.phase !== 'measure' || !isOk(record) || record.attempt > 1) return
    const times = record.token_times
    if (times.length <= MIN_GAPS) return
    const gaps = new Float64Array(times.length - 1)
    for (let i = 1; i < times.length; i++) gaps[i - 1] = (times[i] as number) - (times[i - 1] as number)
    gaps.sort()
    const span = {
      from: times[0] as number,
      to: times[times.length - 1] as number,
      medianGapMs: gaps[gaps.length >> 1] as number,
    }
    const spans = this.byLevel.get(record.level)
    if (spans === undefined) this.byLevel.set(record.level, [span])
    else spans.push(span)
  }

  /** A point per request: its median gap against the mean batch it decoded in. */
  points(): DecodePoint[] {
    return [...this.byLevel.values()].flatMap((spans) => {
      const edges = decodingEdges(spans)
      return spans.flatMap((span) => {
        const batch = meanDecoding(edges, span.from, span.to)
        return batch === null ? [] : [{ batch, stepMs: span.medianGapMs }]
      })
    })
  }
}

/**
 * The number of a level's requests decoding at once as a step function, with its running integral at
 * each change, so any window's mean is two binary searches (a level may hold tens of thousands).
 */
interface DecodingCurve {
  /** Times at which the count changes, ascending. */
  at: Float64Array
  /** The count from at[i] until at[i + 1]. */
  count: Float64Array
  /** ∫ count dt from at[0] to at[i]. */
  area: Float64Array
}

function decodingEdges(spans: readonly DecodeSpan[]): DecodingCurve {
  const edges = spans
    .flatMap((span) => [
      { at: span.from, change: 1 },
      { at: span.to, change: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.change - b.change)
  const n = edges.length
  const curve = { at: new Float64Array(n), count: new Float64Array(n), area: new Float64Array(n) }
  let count = 0
  for (let i = 0; i < n; i++) {
    const edge = edges[i] as { at: number; change: number }
    curve.at[i] = edge.at
    curve.area[i] =
      i === 0 ? 0 : (curve.area[i - 1] as number) + count * (edge.at - (curve.at[i - 1] as number))
    count += edge.change
    curve.count[i] = count
  }
  return curve
}

/** ∫ count dt from the first change to `t`. */
function areaUntil(curve: DecodingCurve, t: number): number {
  // The last change at or before t.
  let low = 0
  let high = curve.at.length - 1
  if (high < 0 || t <= (curve.at[0] as number)) return 0
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if ((curve.at[mid] as number) <= t) low = mid
    else high = mid - 1
  }
  return (curve.area[low] as number) + (curve.count[low] as number) * (t - (curve.at[low] as number))
}

/** The time-weighted mean of the requests decoding at once over [from, to]; null for an empty window. */
function meanDecoding(curve: DecodingCurve, from: number, to: number): number | null {
  if (!(to > from)) return null
  return (areaUntil(curve, to) - areaUntil(curve, from)) / (to - from)
}
