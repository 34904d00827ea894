import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  binomialTail,
  convolvePmfs,
  exceedancePmf,
  logGamma,
  pmfMean,
  upperTail,
} from '../../src/compare/exceedance-test.js'

const close = (actual: number, expected: number, relative = 1e-9): void =>
  assert.ok(
    // ln 0! and ln 1! are 0: there the tolerance is absolute.
    Math.abs(actual - expected) <= relative * (expected === 0 ? 1 : Math.abs(expected)),
    `${actual} is not within ${relative} of ${expected}`,
  )

test('logGamma: ln (n-1)! at integers, ln √π at 1/2, and large arguments without overflow', () => {
  let factorial = 1
  for (let n = 1; n <= 25; n++) {
    close(logGamma(n), Math.log(factorial), 1e-12)
    factorial *= n
  }
  close(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-12)
  // Stirling's series at 1e6: ln Γ(x) = (x - 1/2) ln x - x + ln(2π)/2 + 1/(12x) - ...
  const x = 1e6
  close(logGamma(x), (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + 1 / (12 * x), 1e-12)
})

test('binomialTail: P(X >= k) for n = 20, p = 0.1 against closed forms and the table value', () => {
  const q = 0.9
  close(binomialTail(20, 0.1, 1), 1 - q ** 20)
  close(binomialTail(20, 0.1, 2), 1 - q ** 20 - 20 * 0.1 * q ** 19)
  // Binomial tables: P(X <= 4) = 0.9568 for n = 20, p = 0.1.
  assert.equal(Number(binomialTail(20, 0.1, 5).toFixed(4)), Number((1 - 0.9568).toFixed(4)))
  close(binomialTail(20, 0.1, 20), 0.1 ** 20)
  assert.equal(binomialTail(20, 0.1, 0), 1)
  assert.equal(binomialTail(20, 0.1, 21), 0)
  // Far tails of long runs stay finite and ordered.
  const far = binomialTail(5000, 0.1, 800)
  assert.ok(far > 0 && far < binomialTail(5000, 0.1, 700) && far < 1e-30, String(far))
})

/**
 * Every way n new and m base values can interleave is equally likely when nothing changed: the
 * brute-force count of arrangements with at least k new values beyond the base's (m - above)-th
 * smallest, over all C(m + n, n).
 */
function enumeratedTail(n: number, m: number, above: number, k: number): number {
  let hits = 0
  let all = 0
  const total = m + n
  for (let mask = 0; mask < 2 ** total; mask++) {
    let news = 0
    for (let bit = 0; bit < total; bit++) if (mask & (2 ** bit)) news++
    if (news !== n) continue
    all++
    // Positions from the largest down; count new values before the base's (above + 1)-th largest.
    let basesSeen = 0
    let beyond = 0
    for (let position = total - 1; position >= 0; position--) {
      if (mask & (2 ** position)) {
        if (basesSeen <= above) beyond++
      } else basesSeen++
    }
    if (beyond >= k) hits++
  }
  return hits / all
}

test('exceedancePmf: equals the enumeration of every arrangement under no change', () => {
  for (const [n, m, above] of [
    [6, 8, 0],
    [7, 9, 1],
    [5, 10, 2],
  ] as const) {
    const pmf = exceedancePmf(n, m, above)
    close(
      pmf.reduce((sum, p) => sum + p, 0),
      1,
      1e-12,
    )
    for (let k = 0; k <= n; k++) close(upperTail(pmf, k), enumeratedTail(n, m, above, k), 1e-9)
    // The expected share is that of the Beta(above + 1, m - above) the base's order statistic leaves.
    close(pmfMean(pmf), (n * (above + 1)) / (m + 1), 1e-9)
  }
  // One base value: the new values beyond it are uniform on 0..n.
  const n = 12
  for (let k = 0; k <= n; k++) close(upperTail(exceedancePmf(n, 1, 0), k), (n - k + 1) / (n + 1), 1e-9)
})

test('exceedancePmf: a short base is far wider than the binomial at its share; a long one agrees with it', () => {
  // 16 requests a side: 7 new ones beyond the base p90 is rare for a binomial at 10%, not when the
  // base p90 is itself one of 16 draws.
  const short = upperTail(exceedancePmf(16, 16, 1), 7)
  assert.ok(short > 10 * binomialTail(16, 0.1, 7), `${short} vs ${binomialTail(16, 0.1, 7)}`)
  const m = 200_000
  const above = m / 10
  const long = upperTail(exceedancePmf(100, m, above), 16)
  close(long, binomialTail(100, (above + 1) / (m + 1), 16), 0.02)
})

test('convolvePmfs: the sum of independent counts', () => {
  const coin = [0.5, 0.5]
  assert.deepEqual(convolvePmfs([coin, coin, coin]), [0.125, 0.375, 0.375, 0.125])
  const pairs = [exceedancePmf(4, 5, 0), exceedancePmf(3, 6, 1)]
  const summed = convolvePmfs(pairs)
  close(pmfMean(summed), pmfMean(pairs[0] as number[]) + pmfMean(pairs[1] as number[]), 1e-12)
  close(upperTail(summed, 7), (pairs[0]?.[4] as number) * (pairs[1]?.[3] as number), 1e-12)
})
