import type { BpeRanks } from './bpe-ranks.js'

/**
 * tiktoken's byte-pair encoding over a compact rank table: the text is split by the encoding's
 * pattern; a piece whose UTF-8 bytes are a token is that token, any other is merged from single
 * bytes, always joining first the adjacent pair whose joined bytes have the lowest rank (the first
 * such pair on a tie), until no adjacent pair is a token. Special-token strings such as
 * `<|endoftext|>` are ordinary text here, as a prompt is.
 */
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
