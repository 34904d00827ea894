/**
 * Exact tail probabilities for the tail-share gate (tail-share.ts): how many of the new run's
 * requests lie beyond the base run's p90, against what no change would give.
 */

/** Lanczos coefficients (g = 7, 9 terms): ln Γ to about 15 digits over x > 0. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
]

/** ln Γ(x), x > 0: in log space so C(n, k) and B(a, b) of thousands of requests do not overflow. */
export function logGamma(x: number): number {
  // Reflection below 1/2, where the series loses precision.
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x)
  const z = x - 1
  let sum = LANCZOS[0] as number
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (z + i)
  const t = z + 7.5
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum)
}

const logChoose = (n: number, k: number): number => logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1)

const logBeta = (a: number, b: number): number => logGamma(a) + logGamma(b) - logGamma(a + b)

/**
 * P(X >= k), X ~ Binomial(n, p): the one-sided exact binomial tail, each term summed from its
 * logarithm (no term under- or overflows whatever n). The exceedance test below tends to it when the
 * base run is long enough for its p90 to be known.
 */
export function binomialTail(n: number, p: number, k: number): number {
  if (k <= 0) return 1
  if (k > n) return 0
  if (p <= 0) return 0
  if (p >= 1) return 1
  let sum = 0
  for (let j = k; j <= n; j++) sum += Math.exp(logChoose(n, j) + j * Math.log(p) + (n - j) * Math.log1p(-p))
  return Math.min(1, sum)
}

/**
 * The distribution, under no change, of how many of `n` new values lie beyond a threshold that is
 * the base sample's own order statistic with `above` of its `m` values beyond it: index y holds P(Y = y).
 *
 * Why not Binomial(n, 10%): the base p90 of 40 requests is itself a draw. Under no change the share
 * of the common distribution beyond the base's (m - above)-th smallest value is Beta(above + 1, m - above)
 * (mean (above + 1)/(m + 1)), so Y is beta-binomial: exact for any m, with no assumption on the
 * distribution's shape. A binomial at 10% treats the base p90 as known, and at 16 requests a side
 * flags an A/A pair several times as often as its alpha says; past a few thousand base requests the
 * two agree.
 */
export function exceedancePmf(n: number, m: number, above: number): number[] {
  const alpha = above + 1
  const beta = m - above
  const norm = logBeta(alpha, beta)
  return Array.from({ length: n + 1 }, (_, y) =>
    Math.exp(logChoose(n, y) + logBeta(y + alpha, n - y + beta) - norm),
  )
}

/** The distribution of a sum of independent counts, each given by its pmf (index = count). */
export function convolvePmfs(pmfs: readonly (readonly number[])[]): number[] {
  let total = [1]
  for (const pmf of pmfs) {
    const next = new Array<number>(total.length + pmf.length - 1).fill(0)
    total.forEach((p, i) => {
      pmf.forEach((q, j) => {
        next[i + j] = (next[i + j] as number) + p * q
      })
    })
    total = next
  }
  return total
}

/** P(Y >= k) of a pmf: summed from the far end, so a tail of 1e-12 is not lost beside a mass near 1. */
export function upperTail(pmf: readonly number[], k: number): number {
  let sum = 0
  for (let y = pmf.length - 1; y >= Math.max(0, k); y--) sum += pmf[y] as number
  return Math.min(1, sum)
}

/** The mean of a pmf: the count expected under no change. */
export function pmfMean(pmf: readonly number[]): number {
  return pmf.reduce((sum, p, y) => sum + p * y, 0)
}
