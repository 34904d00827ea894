/** Seeded randomness: every draw in llmbench (prompts, lengths, arrivals, faults, bootstrap) is reproducible. */

/** mulberry32: a tiny, fast, seedable PRNG; Math.random cannot be seeded. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Box-Muller: one standard normal draw from two uniform ones. */
export function standardNormal(random: () => number): number {
  const u = 1 - random() // (0, 1]: log(0) is not a number
  const v = random()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
}
