/**
 * A distribution-free confidence interval of a quantile from the order statistics of a sample: the
 * number of values below the true q-quantile is Binomial(n, q), so [x(j), x(k)] covers it with the
 * probability that j ≤ that count < k. No assumption about the shape (latencies are skewed), nothing
 * resampled, the same sample always gives the same interval.
 *
 * `sorted` ascending. Each tail is at most (1 − confidence) / 2; a sample too small to reach that
 * (n = 5 for the median at 95%) gets its minimum or maximum as that end, the widest it has.
 */
export function quantileInterval(
  sorted: ArrayLike<number>,
  q: number,
  confidence = 0.95,
): { low: number; high: number } | null {
  const n = sorted.length
  if (n === 0 || !(q > 0 && q < 1)) return null
  const tail = (1 - confidence) / 2
  const step = Math.log(q) - Math.log1p(-q)
  // Binomial(n, q) walked up from 0: logPmf = log P(B = i), cdf = P(B ≤ i).
  let logPmf = n * Math.log1p(-q)
  let cdf = 0
  // x(j) is above the quantile when B ≤ j − 1; x(k) below it when B ≥ k (ranks from 1).
  let j = 1
  let k = n
  for (let i = 0; i < n; i++) {
    cdf += Math.exp(logPmf)
    if (cdf <= tail) j = i + 1
    if (cdf >= 1 - tail) {
      k = i + 1
      break
    }
    logPmf += Math.log((n - i) / (i + 1)) + step
  }
  return { low: sorted[Math.min(j, n) - 1] as number, high: sorted[Math.max(k, j) - 1] as number }
}
