import { seededRandom } from '../../random.js'

/**
 * --paired (issue 38): two targets, A (the base, target 0) and B (target 1), measured in blocks that
 * alternate inside every level, so whatever drifts during the run (a neighbour on the host, a
 * thermal step) hits both alike. After Abedi and Brecht (ICPE 2017): back-to-back runs on shared
 * hardware told two identical systems apart "with confidence"; randomized multiple interleaved
 * trials did not. Each pair of blocks is one adjacent A and B, in a randomized balanced order: a
 * pair is AB or BA by a seeded coin, so neither target is always first (first after the other's
 * drain, or first in a level), and compare judges the per-pair differences (compare/paired.ts).
 */

/** One block of a level: which target, and which pair it belongs to. */
export interface PairedBlock {
  /** 0 = A, the base; 1 = B, judged against it. */
  target: 0 | 1
  /** The pair's index in the level, from 0: the A and B blocks of one pair are adjacent. */
  pair: number
}

/** A block of --paired-mode together: both targets given the whole level at once, stamped with its pair. */
export interface TogetherBlock {
  target: 'each'
  pair: number
}

/** The blocks of a together level, in order: each pair one block of both targets at once. */
export function togetherBlocks(pairs = PAIRS_PER_LEVEL): TogetherBlock[] {
  return Array.from({ length: pairs }, (_, pair) => ({ target: 'each' as const, pair }))
}

/** Pairs per level: 4 give 3 degrees of freedom to a paired t interval, and 8 blocks to alternate. */
export const PAIRS_PER_LEVEL = 4

/** A block holds at least this many rounds of the level's streams: one to fill them, one measured full. */
export const MIN_BLOCK_ROUNDS = 2

/**
 * Requests per block of each target: the level's requests (each target's) cut into PAIRS_PER_LEVEL
 * blocks, at least MIN_BLOCK_ROUNDS rounds of its streams each.
 */
export function blockRequests(requestsPerLevel: number, streams: number, pairs = PAIRS_PER_LEVEL): number {
  return Math.max(MIN_BLOCK_ROUNDS * streams, Math.ceil(requestsPerLevel / pairs))
}

/** Requests a --paired level sends in all: both targets' blocks. */
export function pairedLevelRequests(requestsPerLevel: number, streams: number): number {
  return 2 * PAIRS_PER_LEVEL * blockRequests(requestsPerLevel, streams)
}

/** The blocks of the level with this index, in the order they run: AB or BA per pair, by a seeded coin. */
export function pairedOrder(seed: number, levelIndex: number, pairs = PAIRS_PER_LEVEL): PairedBlock[] {
  const random = seededRandom((seed ^ Math.imul(levelIndex + 1, 0x9e3779b1)) >>> 0)
  // Balanced: as many pairs begin with A as with B (an odd pair out by the coin), in a shuffled order.
  const firsts: (0 | 1)[] = Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? 0 : 1))
  if (pairs % 2 === 1 && random() < 0.5) firsts[pairs - 1] = 1
  for (let i = firsts.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[firsts[i], firsts[j]] = [firsts[j] as 0 | 1, firsts[i] as 0 | 1]
  }
  return firsts.flatMap((first, pair) => [
    { target: first, pair },
    { target: (1 - first) as 0 | 1, pair },
  ])
}

/** "ABBA BAAB": a level's order as the run prints it. */
export function describeOrder(blocks: readonly PairedBlock[]): string {
  const letters = blocks.map((block) => (block.target === 0 ? 'A' : 'B'))
  const pairs: string[] = []
  for (let i = 0; i < letters.length; i += 2) pairs.push(letters.slice(i, i + 2).join(''))
  return pairs.join(' ')
}
