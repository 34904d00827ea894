/**
 * Monotone piecewise cubic Hermite interpolation (PCHIP, Fritsch and Carlson 1980): through the
 * points, with slopes chosen so that the curve never overshoots its data between two points, where a
 * plain cubic spline through a noisy measured curve would swing past a threshold and back. The
 * knots' slopes are the weighted harmonic mean of the two secants beside them (zero where the data
 * turns), the ends a one-sided three-point estimate kept in the data's direction, as SciPy's
 * PchipInterpolator does.
 */
export function pchip(xs: readonly number[], ys: readonly number[]): (x: number) => number {
  const n = xs.length
  if (n !== ys.length || n === 0) throw new Error('pchip: as many x as y, at least one')
  if (n === 1) return () => ys[0] as number
  const h: number[] = []
  const secant: number[] = []
  for (let i = 0; i < n - 1; i++) {
    const width = (xs[i + 1] as number) - (xs[i] as number)
    if (!(width > 0)) throw new Error('pchip: x must increase')
    h.push(width)
    secant.push(((ys[i + 1] as number) - (ys[i] as number)) / width)
  }
  const slope = new Array<number>(n).fill(0)
  if (n === 2) {
    slope[0] = secant[0] as number
    slope[1] = secant[0] as number
  } else {
    for (let i = 1; i < n - 1; i++) {
      const before = secant[i - 1] as number
      const after = secant[i] as number
      if (before * after <= 0) continue
      const w1 = 2 * (h[i] as number) + (h[i - 1] as number)
      const w2 = (h[i] as number) + 2 * (h[i - 1] as number)
      slope[i] = (w1 + w2) / (w1 / before + w2 / after)
    }
    slope[0] = endSlope(h[0] as number, h[1] as number, secant[0] as number, secant[1] as number)
    slope[n - 1] = endSlope(
      h[n - 2] as number,
      h[n - 3] as number,
      secant[n - 2] as number,
      secant[n - 3] as number,
    )
  }
  return (x) => {
    if (x <= (xs[0] as number)) return (ys[0] as number) + (slope[0] as number) * (x - (xs[0] as number))
    if (x >= (xs[n - 1] as number))
      return (ys[n - 1] as number) + (slope[n - 1] as number) * (x - (xs[n - 1] as number))
    let i = 0
    while (x > (xs[i + 1] as number)) i++
    const width = h[i] as number
    const t = (x - (xs[i] as number)) / width
    const t2 = t * t
    const t3 = t2 * t
    return (
      (2 * t3 - 3 * t2 + 1) * (ys[i] as number) +
      (t3 - 2 * t2 + t) * width * (slope[i] as number) +
      (-2 * t3 + 3 * t2) * (ys[i + 1] as number) +
      (t3 - t2) * width * (slope[i + 1] as number)
    )
  }
}

/** The slope at an end: three-point, set to zero or capped where it would overshoot. */
function endSlope(h0: number, h1: number, d0: number, d1: number): number {
  const slope = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
  if (Math.sign(slope) !== Math.sign(d0)) return 0
  if (Math.sign(d0) !== Math.sign(d1) && Math.abs(slope) > Math.abs(3 * d0)) return 3 * d0
  return slope
}

/**
 * Where `f` crosses zero between `low` and `high` (f(low) ≤ 0 < f(high)), by bisection on f to a
 * `precision`; null when f does not change sign there.
 */
export function crossing(
  f: (x: number) => number,
  low: number,
  high: number,
  precision: number,
): number | null {
  let a = low
  let b = high
  if (!(f(a) <= 0 && f(b) > 0)) return null
  for (let i = 0; i < 200 && b - a > precision; i++) {
    const middle = (a + b) / 2
    if (f(middle) <= 0) a = middle
    else b = middle
  }
  return (a + b) / 2
}
