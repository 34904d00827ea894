import { percentileOfSorted } from '../metrics/distribution.js'
import { seededRandom } from '../random.js'

/**
 * A figure of one run's level as a function of how many times each of its requests is drawn: with
 * every count 1 it is the figure itself; a bootstrap round passes the counts of a resample. Null
 * when the resample has nothing to compute it from (no successful request drawn).
 */
export type WeightedStatistic = (counts: Uint32Array) => number | null

/** One run's side of a block bootstrap: its requests in time order, and the figure compared. */
export interface BlockSample {
  /** Measured requests of the level, in the order they were sent. */
  requests: number
  /** Requests resampled together: neighbours in time share the server's slow and fast spells. */
  blockLength: number
  statistic: WeightedStatistic
}

/**
 * How many consecutive requests (in send order) one bootstrap block holds. Requests in flight at the
 * same time share the server's state (a slow spell, a convoy, a neighbour's prefill), so they are not
 * independent draws: a block holds at least the requests that overlapped (`concurrent`, the level's
 * mean in flight), and at least n^(1/3) (the usual block length for a variance, for the slower
 * drifts). At most a third of the requests, so that a resample still mixes three or more stretches
 * of the run (one block as long as the run would only rotate it: no variation at all).
 */
export function blockLengthFor(requests: number, concurrent: number): number {
  const wanted = Math.max(Math.ceil(Math.cbrt(requests)), Math.round(concurrent))
  return Math.max(1, Math.min(wanted, Math.floor(requests / 3)))
}

/**
 * A circular block resample of `counts.length` time-ordered requests, as counts per request: blocks
 * of `blockLength` consecutive requests from uniform starts (wrapping at the end, so the first and
 * last requests are drawn as often as the others), until as many requests as the run had are drawn.
 */
export function drawBlocks(counts: Uint32Array, blockLength: number, random: () => number): void {
  const n = counts.length
  counts.fill(0)
  let drawn = 0
  while (drawn < n) {
    const start = Math.floor(random() * n)
    for (let k = 0; k < blockLength && drawn < n; k++, drawn++) {
      const index = (start + k) % n
      counts[index] = (counts[index] as number) + 1
    }
  }
}

/**
 * The given percentile of the values of the drawn requests, each value counted as often as its
 * request was drawn; `valuesPerRequest[i]` holds request i's values (one TTFT, or every ITL gap of
 * its stream; none for a failed request). Sorted once: a round walks the sorted values with their
 * counts to the wanted rank, O(values), with the linear interpolation every other percentile here uses.
 */
export function weightedPercentile(
  valuesPerRequest: readonly (readonly number[])[],
  percentile: number,
): WeightedStatistic {
  const { sorted, owners: sortedOwners } = sortedWithOwners(valuesPerRequest)
  const sizes = valuesPerRequest.map((values) => values.length)
  return (counts) => {
    let total = 0
    for (let request = 0; request < sizes.length; request++)
      total += (counts[request] as number) * (sizes[request] as number)
    if (total === 0) return null
    const h = ((total - 1) * percentile) / 100
    const lowerRank = Math.floor(h)
    return percentile > 50
      ? fromTop(sorted, sortedOwners, counts, total, h, lowerRank)
      : fromBottom(sorted, sortedOwners, counts, h, lowerRank)
  }
}

/**
 * The values of every request sorted, each with its request's index. Kept per array: a level's
 * figures ask several percentiles of one measure (p50, p95), and the sort is most of their cost.
 */
const sortedCache = new WeakMap<
  readonly (readonly number[])[],
  { sorted: Float64Array; owners: Uint32Array }
>()

function sortedWithOwners(valuesPerRequest: readonly (readonly number[])[]): {
  sorted: Float64Array
  owners: Uint32Array
} {
  const cached = sortedCache.get(valuesPerRequest)
  if (cached !== undefined) return cached
  let length = 0
  for (const values of valuesPerRequest) length += values.length
  const flat = new Float64Array(length)
  const owners = new Uint32Array(length)
  let at = 0
  valuesPerRequest.forEach((values, request) => {
    for (const value of values) {
      flat[at] = value
      owners[at++] = request
    }
  })
  const order = new Uint32Array(length)
  for (let index = 0; index < length; index++) order[index] = index
  order.sort((x, y) => (flat[x] as number) - (flat[y] as number))
  const result = {
    sorted: Float64Array.from(order, (index) => flat[index] as number),
    owners: Uint32Array.from(order, (index) => owners[index] as number),
  }
  sortedCache.set(valuesPerRequest, result)
  return result
}

/** The interpolated value at rank h (lowerRank its floor) walking up from the smallest value. */
function fromBottom(
  sorted: Float64Array,
  owners: Uint32Array,
  counts: Uint32Array,
  h: number,
  lowerRank: number,
): number {
  let seen = 0
  let lower = Number.NaN
  for (let index = 0; index < sorted.length; index++) {
    seen += counts[owners[index] as number] as number
    if (Number.isNaN(lower) && seen > lowerRank) lower = sorted[index] as number
    if (seen > lowerRank + 1) return lower + (h - lowerRank) * ((sorted[index] as number) - lower)
  }
  return lower
}

/**
 * The same walking down from the largest: a tail percentile (p95, p99) is found after the few values
 * above it rather than all those below (a bootstrap asks it a thousand times per side).
 */
function fromTop(
  sorted: Float64Array,
  owners: Uint32Array,
  counts: Uint32Array,
  total: number,
  h: number,
  lowerRank: number,
): number {
  // Ranks counted from the top: the upper neighbour (lowerRank + 1) is met first, if it exists.
  const lowerFromTop = total - 1 - lowerRank
  const upperFromTop = lowerFromTop - 1
  let seen = 0
  let upper = Number.NaN
  for (let index = sorted.length - 1; index >= 0; index--) {
    seen += counts[owners[index] as number] as number
    if (upperFromTop >= 0 && Number.isNaN(upper) && seen > upperFromTop) upper = sorted[index] as number
    if (seen > lowerFromTop) {
      const lower = sorted[index] as number
      return Number.isNaN(upper) ? lower : lower + (h - lowerRank) * (upper - lower)
    }
  }
  return Number.NaN
}

/** A 95% interval, with the figures' own change it belongs to. */
export interface ChangeInterval {
  /** change(base, next) of the figures themselves (every request counted once). */
  change: number
  low: number
  high: number
}

/**
 * Seeded circular block bootstrap of change(base figure, new figure): each round draws each run's
 * requests in blocks (see blockLengthFor, drawBlocks), recomputes both figures from the drawn
 * requests and keeps their change; the interval is the 2.5% and 97.5% quantiles of the rounds'
 * changes. The decision and the interval are then on one quantity (the relative change of a
 * percentile, a throughput, the points of a success rate). Seeded: the same records, the same
 * interval. Null when either figure cannot be computed or the change is undefined (a base of 0).
 */
export function blockBootstrapChange(
  base: BlockSample,
  next: BlockSample,
  change: (base: number, next: number) => number | null,
  rounds = 1000,
  seed = 42,
): ChangeInterval | null {
  if (base.requests === 0 || next.requests === 0) return null
  const figure = (sample: BlockSample): number | null =>
    sample.statistic(new Uint32Array(sample.requests).fill(1))
  const baseFigure = figure(base)
  const nextFigure = figure(next)
  const observed = baseFigure === null || nextFigure === null ? null : change(baseFigure, nextFigure)
  if (observed === null || !Number.isFinite(observed)) return null
  const random = seededRandom(seed)
  const countsBase = new Uint32Array(base.requests)
  const countsNext = new Uint32Array(next.requests)
  const changes: number[] = []
  for (let round = 0; round < rounds; round++) {
    drawBlocks(countsBase, base.blockLength, random)
    drawBlocks(countsNext, next.blockLength, random)
    const b = base.statistic(countsBase)
    const n = next.statistic(countsNext)
    const drawn = b === null || n === null ? null : change(b, n)
    if (drawn !== null && Number.isFinite(drawn)) changes.push(drawn)
  }
  if (changes.length === 0) return null
  changes.sort((x, y) => x - y)
  return {
    change: observed,
    low: percentileOfSorted(changes, 2.5) as number,
    high: percentileOfSorted(changes, 97.5) as number,
  }
}

/** (next - base) / base; undefined (null) for a base of 0. */
export const relativeChange = (base: number, next: number): number | null =>
  base === 0 ? null : (next - base) / base

/** next - base: for shares (success rate in points). */
export const absoluteChange = (base: number, next: number): number => next - base
