/**
 * Splits `total` into `parts` shares that differ by at most one, larger shares first:
 * split(10, 3) = [4, 3, 3]. Used to spread a level's streams, requests and warm-up over workers.
 */
export function splitEvenly(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => evenShare(total, i, parts))
}

/** Share `index` of `splitEvenly(total, parts)`, without building the others. */
export function evenShare(total: number, index: number, parts: number): number {
  const base = Math.floor(total / parts)
  return base + (index < total - base * parts ? 1 : 0)
}

/**
 * Splits `total` in proportion to `weights` (largest remainder method): the shares add up to
 * `total` exactly, so a split level issues exactly the requests the user asked for.
 */
export function splitProportionally(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0)
  if (sum === 0) return weights.map(() => 0)
  const exact = weights.map((w) => (total * w) / sum)
  const shares = exact.map(Math.floor)
  let left = total - shares.reduce((a, b) => a + b, 0)
  const byRemainder = exact.map((value, i) => ({ i, remainder: value - Math.floor(value) }))
  byRemainder.sort((a, b) => b.remainder - a.remainder || a.i - b.i)
  for (const { i } of byRemainder) {
    if (left-- <= 0) break
    shares[i] = (shares[i] as number) + 1
  }
  return shares
}
