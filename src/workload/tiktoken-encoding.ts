import type { BpeRanks } from './bpe-ranks.js'

/**
 * tiktoken's byte-pair encoding over a compact rank table: the text is split by the encoding's
 * pattern; a piece whose UTF-8 bytes are a token is that token, any other is merged from single
 * bytes, always joining first the adjacent pair whose joined bytes have the lowest rank (the first
 * such pair on a tie), until no adjacent pair is a token. Special-token strings such as
 * `<|endoftext|>` are ordinary text here, as a prompt is.
 */
/** Pieces up to this many bytes merge by scanning (mergeShort); longer ones through a heap (mergeLong). */
const SHORT_PIECE = 64

export class TiktokenEncoding {
  private readonly encoder = new TextEncoder()
  private readonly decoder = new TextDecoder()
  /** A piece's UTF-8 bytes; grown when a longer piece comes. */
  private scratch = new Uint8Array(256)

  constructor(
    private readonly ranks: BpeRanks,
    private readonly split: RegExp,
    /** Ranks above the table that name special tokens: decode leaves them out. */
    private readonly specialRanks: ReadonlySet<number>,
  ) {}

  encode(text: string): number[] {
    const ids: number[] = []
    this.eachPiece(text, (bytes, length) => {
      const whole = this.ranks.rankOf(bytes, 0, length)
      if (whole !== -1) ids.push(whole)
      else this.merge(bytes, length, ids)
    })
    return ids
  }

  count(text: string): number {
    let count = 0
    this.eachPiece(text, (bytes, length) => {
      count += this.ranks.rankOf(bytes, 0, length) !== -1 ? 1 : this.merge(bytes, length, null)
    })
    return count
  }

  /** The text of `ids`; special tokens are left out; an id that is neither throws. */
  decode(ids: readonly number[]): string {
    const parts: Uint8Array[] = []
    let length = 0
    for (const id of ids) {
      const bytes = this.ranks.bytesOf(id)
      if (bytes === undefined) {
        if (this.specialRanks.has(id)) continue
        throw new RangeError(`token id ${id} is not in the encoding`)
      }
      parts.push(bytes)
      length += bytes.length
    }
    const joined = new Uint8Array(length)
    let at = 0
    for (const part of parts) {
      joined.set(part, at)
      at += part.length
    }
    return this.decoder.decode(joined)
  }

  /** Calls `visit` with each piece's UTF-8 bytes (in a reused buffer) and their length. */
  private eachPiece(text: string, visit: (bytes: Uint8Array, length: number) => void): void {
    const split = this.split
    split.lastIndex = 0
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      const piece = match[0]
      // An empty match would not advance; the patterns have none, but a loop must not hang on one.
      if (piece.length === 0) {
        split.lastIndex++
        continue
      }
      // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair's 4 bytes are 2 units).
      if (this.scratch.length < piece.length * 3) this.scratch = new Uint8Array(piece.length * 3)
      const { written } = this.encoder.encodeInto(piece, this.scratch)
      visit(this.scratch, written)
    }
  }

  /**
   * Merges bytes[0 .. length) into tokens, appending their ranks to `out` when given; returns how
   * many there are. parts[i] is where part i starts; pairRanks[i] is the rank of parts i and i + 1
   * joined (Infinity when that is not a token).
   */
  private merge(bytes: Uint8Array, length: number, out: number[] | null): number {
    return length > SHORT_PIECE ? this.mergeLong(bytes, length, out) : this.mergeShort(bytes, length, out)
  }

  /** The merge by scanning for the lowest pair each step: quadratic in the piece, quickest for a word. */
  private mergeShort(bytes: Uint8Array, length: number, out: number[] | null): number {
    const parts: number[] = []
    const pairRanks: number[] = []
    for (let i = 0; i <= length; i++) parts.push(i)
    for (let i = 0; i < length; i++)
      pairRanks.push(i + 2 <= length ? this.rankOrInfinity(bytes, i, i + 2) : Infinity)
    // parts has one more entry than there are parts (the end); pairRanks one per part.
    while (parts.length > 2) {
      let lowest = Infinity
      let at = -1
      for (let i = 0; i < pairRanks.length - 1; i++) {
        const rank = pairRanks[i] as number
        if (rank < lowest) {
          lowest = rank
          at = i
        }
      }
      if (at === -1) break
      parts.splice(at + 1, 1)
      pairRanks.splice(at, 1)
      pairRanks[at] = this.pairRank(bytes, parts, at)
      if (at > 0) pairRanks[at - 1] = this.pairRank(bytes, parts, at - 1)
    }
    const count = parts.length - 1
    if (out !== null)
      for (let i = 0; i < count; i++) {
        const rank = this.ranks.rankOf(bytes, parts[i] as number, parts[i + 1] as number)
        // Every single byte is a token in these encodings, so a part is always one.
        if (rank === -1) throw new Error('byte-pair merge left a part that is not a token')
        out.push(rank)
      }
    return count
  }

  /**
   * The same merge, for a long piece (one unbroken string of a broken model or a batching proxy can
   * be megabytes): the parts are a linked list and the pairs a heap ordered by rank, then by
   * position, so each step takes the lowest pair, the first on a tie, as mergeShort does, in
   * O(n log n) rather than O(n²). A heap entry whose pair has changed since is skipped when it comes up.
   */
  private mergeLong(bytes: Uint8Array, length: number, out: number[] | null): number {
    // Each part is named by its first byte; next[s] is where the part after it starts (length: none).
    const next = new Int32Array(length)
    const prev = new Int32Array(length)
    /** The rank of the pair starting at s (Infinity: none), -1 once s is merged into the part before it. */
    const pairRank = new Float64Array(length)
    const heap = new PairHeap()
    for (let i = 0; i < length; i++) {
      next[i] = i + 1
      prev[i] = i - 1
    }
    const rankAt = (s: number): number => {
      const second = next[s] as number
      return second >= length
        ? Infinity
        : this.rankOrInfinity(bytes, s, second < length ? (next[second] as number) : length)
    }
    for (let i = 0; i < length; i++) {
      pairRank[i] = rankAt(i)
      if (pairRank[i] !== Infinity) heap.push(pairRank[i] as number, i)
    }
    let parts = length
    while (heap.size > 0) {
      const rank = heap.topRank()
      const s = heap.pop()
      if (pairRank[s] !== rank) continue // merged away, or its pair changed since it was pushed
      const t = next[s] as number
      const after = next[t] as number
      next[s] = after
      if (after < length) prev[after] = s
      pairRank[t] = -1
      parts--
      pairRank[s] = rankAt(s)
      if (pairRank[s] !== Infinity) heap.push(pairRank[s] as number, s)
      const before = prev[s] as number
      if (before >= 0) {
        pairRank[before] = rankAt(before)
        if (pairRank[before] !== Infinity) heap.push(pairRank[before] as number, before)
      }
    }
    if (out !== null)
      for (let s = 0; s < length; s = next[s] as number) {
        const rank = this.ranks.rankOf(bytes, s, next[s] as number)
        if (rank === -1) throw new Error('byte-pair merge left a part that is not a token')
        out.push(rank)
      }
    return parts
  }

  /** The rank of parts i and i + 1 joined; Infinity when i + 1 is the last part. */
  private pairRank(bytes: Uint8Array, parts: readonly number[], i: number): number {
    const end = parts[i + 2]
    return end === undefined ? Infinity : this.rankOrInfinity(bytes, parts[i] as number, end)
  }

  private rankOrInfinity(bytes: Uint8Array, start: number, end: number): number {
    const rank = this.ranks.rankOf(bytes, start, end)
    return rank === -1 ? Infinity : rank
  }
}

/**
 * A min-heap of pairs, ordered by rank and then by position (the first pair on a tie), in two
 * parallel growable arrays.
 */
class PairHeap {
  private ranks = new Float64Array(64)
  private starts = new Int32Array(64)
  size = 0

  push(rank: number, start: number): void {
    if (this.size === this.ranks.length) {
      const ranks = new Float64Array(this.size * 2)
      ranks.set(this.ranks)
      this.ranks = ranks
      const starts = new Int32Array(this.size * 2)
      starts.set(this.starts)
      this.starts = starts
    }
    let i = this.size++
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!precedes(rank, start, this.ranks[parent] as number, this.starts[parent] as number)) break
      this.ranks[i] = this.ranks[parent] as number
      this.starts[i] = this.starts[parent] as number
      i = parent
    }
    this.ranks[i] = rank
    this.starts[i] = start
  }

  topRank(): number {
    return this.ranks[0] as number
  }

  /** Removes the lowest pair and returns its position. */
  pop(): number {
    const top = this.starts[0] as number
    const size = --this.size
    if (size === 0) return top
    const rank = this.ranks[size] as number
    const start = this.starts[size] as number
    let i = 0
    for (;;) {
      let child = 2 * i + 1
      if (child >= size) break
      if (child + 1 < size && this.lower(child + 1, child)) child++
      if (!precedes(this.ranks[child] as number, this.starts[child] as number, rank, start)) break
      this.ranks[i] = this.ranks[child] as number
      this.starts[i] = this.starts[child] as number
      i = child
    }
    this.ranks[i] = rank
    this.starts[i] = start
    return top
  }

  /** Whether the entry at `a` comes before the entry at `b`. */
  private lower(a: number, b: number): boolean {
    return precedes(
      this.ranks[a] as number,
      this.starts[a] as number,
      this.ranks[b] as number,
      this.starts[b] as number,
    )
  }
}

/** Whether pair (rank, start) comes before pair (otherRank, otherStart): the lower rank, then the first. */
function precedes(rank: number, start: number, otherRank: number, otherStart: number): boolean {
  return rank < otherRank || (rank === otherRank && start < otherStart)
}
