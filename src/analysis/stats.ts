import { percentileOfSorted } from '../metrics/distribution.js'
import { seededRandom } from '../random.js'

/**
 * Two-sided Mann-Whitney U test (normal approximation with tie correction and continuity
 * correction): does one sample tend to be larger than the other? Distribution-free, so it suits
 * latencies, which are skewed. Returns the p-value and the probability that a value from `b`
 * exceeds one from `a` (common-language effect size, 0.5 = no shift).
 */
export function mannWhitney(
  a: readonly number[],
  b: readonly number[],
): { p_value: number; prob_b_greater: number } {
  const n1 = a.length
  const n2 = b.length
  if (n1 === 0 || n2 === 0) return { p_value: 1, prob_b_greater: 0.5 }
  const all = [...a.map((value) => ({ value, fromA: true })), ...b.map((value) => ({ value, fromA: false }))]
  all.sort((x, y) => x.value - y.value)
  let rankSumA = 0
  let tieTerm = 0
  for (let i = 0; i < all.length; ) {
    let j = i
    while (
      j + 1 < all.length &&
      (all[j + 1] as { value: number }).value === (all[i] as { value: number }).value
    )
      j++
    const averageRank = (i + j + 2) / 2
    const ties = j - i + 1
    tieTerm += ties ** 3 - ties
    for (let k = i; k <= j; k++) if ((all[k] as { fromA: boolean }).fromA) rankSumA += averageRank
    i = j + 1
  }
  const uA = rankSumA - (n1 * (n1 + 1)) / 2
  const n = n1 + n2
  const mean = (n1 * n2) / 2
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)))
  if (variance <= 0) return { p_value: 1, prob_b_greater: 0.5 }
  const z = (Math.abs(uA - mean) - 0.5) / Math.sqrt(variance)
  const p = Math.min(1, 2 * (1 - normalCdf(Math.max(0, z))))
  return { p_value: p, prob_b_greater: 1 - uA / (n1 * n2) }
}

/** Standard normal CDF (Abramowitz and Stegun 7.1.26, error < 1.5e-7). */
export function normalCdf(z: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(z)) / Math.SQRT2)
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
  const erf = 1 - poly * Math.exp(-(z * z) / 2)
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2
}

/**
 * Seeded bootstrap interval of (statistic(b) - statistic(a)) / statistic(a): both samples are
 * resampled with replacement `rounds` times; returns the 2.5% and 97.5% quantiles of the relative
 * difference. Seeded, so the same records always give the same interval.
 */
export function bootstrapRelativeDifference(
  a: readonly number[],
  b: readonly number[],
  statistic: (sorted: number[]) => number,
  rounds = 1000,
  seed = 42,
): { low: number; high: number } | null {
  if (a.length === 0 || b.length === 0) return null
  const random = seededRandom(seed)
  const resample = (values: readonly number[]): number[] => {
    const out = new Array<number>(values.length)
    for (let i = 0; i < values.length; i++) out[i] = values[Math.floor(random() * values.length)] as number
    return out.sort((x, y) => x - y)
  }
  const diffs: number[] = []
  for (let round = 0; round < rounds; round++) {
    const base = statistic(resample(a))
    if (base === 0) continue
    diffs.push((statistic(resample(b)) - base) / base)
  }
  if (diffs.length === 0) return null
  diffs.sort((x, y) => x - y)
  return { low: percentileOfSorted(diffs, 2.5) as number, high: percentileOfSorted(diffs, 97.5) as number }
}

/**
 * The same interval for a percentile, in O(n) per round instead of a sort: resampling with
 * replacement from a sorted sample only changes how many copies of each order statistic are drawn,
 * so a round counts draws per index and walks the counts to the wanted rank (with the same linear
 * interpolation as every other percentile here).
 */
export function bootstrapPercentileDifference(
  a: readonly number[],
  b: readonly number[],
  percentile: number,
  rounds = 1000,
  seed = 42,
): { low: number; high: number } | null {
  if (a.length === 0 || b.length === 0) return null
  const random = seededRandom(seed)
  const sortedA = Float64Array.from(a).sort()
  const sortedB = Float64Array.from(b).sort()
  const countsA = new Uint32Array(a.length)
  const countsB = new Uint32Array(b.length)
  const resampled = (sorted: Float64Array, counts: Uint32Array): number => {
    const n = sorted.length
    counts.fill(0)
    for (let i = 0; i < n; i++) {
      const drawn = Math.floor(random() * n)
      counts[drawn] = (counts[drawn] as number) + 1
    }
    const h = ((n - 1) * percentile) / 100
    const lowerRank = Math.floor(h)
    let seen = 0
    let lower = Number.NaN
    for (let index = 0; index < n; index++) {
      seen += counts[index] as number
      if (Number.isNaN(lower) && seen > lowerRank) lower = sorted[index] as number
      if (seen > lowerRank + 1 || (seen > lowerRank && lowerRank + 1 >= n)) {
        return lower + (h - lowerRank) * ((sorted[index] as number) - lower)
      }
    }
    return lower
  }
  const diffs: number[] = []
  for (let round = 0; round < rounds; round++) {
    const base = resampled(sortedA, countsA)
    if (base === 0) continue
    diffs.push((resampled(sortedB, countsB) - base) / base)
  }
  if (diffs.length === 0) return null
  diffs.sort((x, y) => x - y)
  return { low: percentileOfSorted(diffs, 2.5) as number, high: percentileOfSorted(diffs, 97.5) as number }
}

/** A statistic for bootstrapRelativeDifference: the given percentile of a sorted sample. */
export function percentileStatistic(percentile: number): (sorted: number[]) => number {
  return (sorted) => percentileOfSorted(sorted, percentile) ?? 0
}
