import { CONFIDENCE, studentT } from '../metrics/intervals.js'

/**
 * Ordinary (optionally weighted) least squares y = Σ coefficient_j × column_j with a 95% t interval on
 * every coefficient: the capacity model's fits with more than one cost (prefill against the prompt and
 * its square, the decode step against the batch and the context it holds). A term is kept only when the
 * data see it, so its interval travels with it (fit.ts keeps a term whose interval excludes 0).
 */
export interface LeastSquaresFit {
  coefficients: number[]
  /** 95% intervals; null ends when the residuals leave no degree of freedom. */
  intervals: { low: number | null; high: number | null }[]
  points: number
  /** Residual sum of squares (weighted): the fit's misfit, to set a richer model against a plainer one. */
  rss: number
}

/**
 * `rows[i]` are point i's regressors (put a 1 first for an intercept). Null when there are fewer
 * points than coefficients or the columns do not tell the coefficients apart (a singular system).
 * Columns are scaled to unit size before solving: a prompt's square is a million times its length.
 */
export function fitLeastSquares(
  rows: readonly (readonly number[])[],
  ys: readonly number[],
  weights?: readonly number[],
): LeastSquaresFit | null {
  const n = Math.min(rows.length, ys.length)
  const k = rows[0]?.length ?? 0
  if (k === 0 || n < k) return null
  const scale = Array.from({ length: k }, (_, j) =>
    Math.max(...rows.slice(0, n).map((row) => Math.abs(row[j] as number)), Number.MIN_VALUE),
  )
  const x = (i: number, j: number) => ((rows[i] as readonly number[])[j] as number) / (scale[j] as number)
  const w = (i: number) => (weights === undefined ? 1 : (weights[i] as number))
  const xtx = Array.from({ length: k }, () => new Array<number>(k).fill(0))
  const xty = new Array<number>(k).fill(0)
  for (let i = 0; i < n; i++)
    for (let a = 0; a < k; a++) {
      xty[a] = (xty[a] as number) + w(i) * x(i, a) * (ys[i] as number)
      for (let b = 0; b < k; b++)
        (xtx[a] as number[])[b] = ((xtx[a] as number[])[b] as number) + w(i) * x(i, a) * x(i, b)
    }
  const inverse = invert(xtx)
  if (inverse === null) return null
  const scaled = inverse.map((row) => row.reduce((sum, v, b) => sum + v * (xty[b] as number), 0))
  let rss = 0
  for (let i = 0; i < n; i++) {
    const fitted = scaled.reduce((sum, c, j) => sum + c * x(i, j), 0)
    rss += w(i) * ((ys[i] as number) - fitted) ** 2
  }
  const coefficients = scaled.map((c, j) => c / (scale[j] as number))
  const df = n - k
  const t = df >= 1 ? studentT(df, CONFIDENCE) : Number.NaN
  const intervals = coefficients.map((c, j) => {
    if (df < 1) return { low: null, high: null }
    const half =
      (t * Math.sqrt(Math.max(0, (rss / df) * ((inverse[j] as number[])[j] as number)))) /
      (scale[j] as number)
    return { low: c - half, high: c + half }
  })
  return { coefficients, intervals, points: n, rss }
}

/** Gauss–Jordan with partial pivoting; null when the matrix is (numerically) singular. */
function invert(matrix: readonly (readonly number[])[]): number[][] | null {
  const k = matrix.length
  const a = matrix.map((row, i) => [...row, ...Array.from({ length: k }, (_, j) => (i === j ? 1 : 0))])
  const size = Math.max(...matrix.map((row) => Math.max(...row.map(Math.abs))), 0)
  for (let col = 0; col < k; col++) {
    let pivot = col
    for (let r = col + 1; r < k; r++)
      if (Math.abs((a[r] as number[])[col] as number) > Math.abs((a[pivot] as number[])[col] as number))
        pivot = r
    const top = (a[pivot] as number[])[col] as number
    if (!(Math.abs(top) > size * 1e-12)) return null
    ;[a[col], a[pivot]] = [a[pivot] as number[], a[col] as number[]]
    const row = a[col] as number[]
    for (let j = 0; j < 2 * k; j++) row[j] = (row[j] as number) / top
    for (let r = 0; r < k; r++) {
      if (r === col) continue
      const other = a[r] as number[]
      const factor = other[col] as number
      if (factor !== 0)
        for (let j = 0; j < 2 * k; j++) other[j] = (other[j] as number) - factor * (row[j] as number)
    }
  }
  return a.map((row) => row.slice(k))
}
