/**
 * A Prometheus-style histogram with fixed upper bounds: per-bucket counts (not yet cumulative), the
 * count and the sum. `observe` allocates nothing, so a server can call it for every token.
 */
export class BucketHistogram {
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last slot is (last bound, +Inf). */
  private readonly counts: Float64Array
  private total = 0
  private sumOfValues = 0

  /** `bounds`: finite, strictly increasing upper bounds (the `le` labels without +Inf). */
  constructor(readonly bounds: readonly number[]) {
    for (let i = 0; i < bounds.length; i++) {
      const b = bounds[i] as number
      if (!Number.isFinite(b) || (i > 0 && b <= (bounds[i - 1] as number)))
        throw new RangeError(`histogram bounds must be finite and strictly increasing: ${bounds.join(',')}`)
    }
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    // Linear scan: ~20 bounds, and most values land in the first few.
    let i = 0
    while (i < this.bounds.length && value > (this.bounds[i] as number)) i++
    this.counts[i] = (this.counts[i] ?? 0) + 1
    this.total++
    this.sumOfValues += value
  }

  get count(): number {
    return this.total
  }

  get sum(): number {
    return this.sumOfValues
  }

  /** Observations <= bounds[i] (i = bounds.length: all of them, the +Inf bucket). */
  cumulative(): number[] {
    const out: number[] = []
    let running = 0
    for (const c of this.counts) {
      running += c
      out.push(running)
    }
    return out
  }
}
