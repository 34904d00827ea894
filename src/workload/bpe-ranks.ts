/**
 * A byte-pair encoding's rank table (the `.tiktoken` format: one `base64-bytes rank` per line) held
 * in three typed arrays instead of 200k JavaScript strings in a Map: every token's bytes in one
 * buffer, where each rank's bytes start, and an open-addressing hash from bytes to rank. For o200k
 * that is about 4 MB, where gpt-tokenizer's array literal and Map cost about 60 MB of RSS.
 */
export class BpeRanks {
  /** Ranks in the table: 0 .. size - 1. */
  readonly size: number
  /** Every rank's bytes, rank after rank. */
  private readonly bytes: Uint8Array
  /** Rank r's bytes are bytes[starts[r] .. starts[r + 1]). */
  private readonly starts: Uint32Array
  /** Hash slot → rank + 1; 0 = empty. Its length is a power of two, at least twice `size`. */
  private readonly slots: Int32Array
  private readonly mask: number

  private constructor(bytes: Uint8Array, starts: Uint32Array, size: number) {
    this.bytes = bytes
    this.starts = starts
    this.size = size
    let capacity = 1
    while (capacity < size * 2) capacity *= 2
    this.slots = new Int32Array(capacity)
    this.mask = capacity - 1
    for (let rank = 0; rank < size; rank++) this.insert(rank)
  }

  /**
   * Parses a `.tiktoken` file's bytes. Its ranks must run 0, 1, 2, ... in order (OpenAI's files
   * do), so that the tokens' bytes are laid out rank after rank without sorting. Decoded straight
   * from the file's bytes: no string per line, so loading peaks little above what it keeps.
   */
  static parse(file: Uint8Array, source: string): BpeRanks {
    // Sized exactly by a first pass: no oversized buffer to copy from and release.
    const sized = measure(file)
    const bytes = new Uint8Array(sized.bytes)
    const starts = new Uint32Array(sized.lines + 1)
    let size = 0
    let used = 0
    let at = 0
    while (at < file.length) {
      if (file[at] === NEWLINE) {
        at++
        continue
      }
      const lineStart = at
      let bits = 0
      let held = 0
      for (; at < file.length && file[at] !== SPACE && file[at] !== NEWLINE; at++) {
        const value = BASE64[file[at] as number] as number
        if (value === PADDING) continue
        if (value === INVALID) throw badLine(file, lineStart, size, source)
        bits = (bits << 6) | value
        held += 6
        if (held >= 8) {
          held -= 8
          bytes[used++] = (bits >>> held) & 0xff
          bits &= 0xff
        }
      }
      if (file[at] !== SPACE || at === lineStart) throw badLine(file, lineStart, size, source)
      let rank = 0
      let digits = 0
      for (at++; at < file.length && file[at] !== NEWLINE; at++, digits++) {
        const digit = (file[at] as number) - ZERO
        if (digit < 0 || digit > 9) throw badLine(file, lineStart, size, source)
        rank = rank * 10 + digit
      }
      if (digits === 0 || rank !== size) throw badLine(file, lineStart, size, source)
      size++
      starts[size] = used
    }
    return new BpeRanks(bytes, starts, size)
  }

  /** The rank of bytes[start .. end), or -1 when they are not a token. */
  rankOf(key: Uint8Array, start: number, end: number): number {
    const length = end - start
    for (let slot = hashBytes(key, start, end) & this.mask; ; slot = (slot + 1) & this.mask) {
      const entry = this.slots[slot] as number
      if (entry === 0) return -1
      const rank = entry - 1
      const from = this.starts[rank] as number
      if ((this.starts[rank + 1] as number) - from !== length) continue
      let same = true
      for (let i = 0; i < length; i++) {
        if (this.bytes[from + i] !== key[start + i]) {
          same = false
          break
        }
      }
      if (same) return rank
    }
  }

  /** The bytes of `rank` (a view, not a copy), or undefined outside the table. */
  bytesOf(rank: number): Uint8Array | undefined {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return undefined
    return this.bytes.subarray(this.starts[rank], this.starts[rank + 1])
  }

  private insert(rank: number): void {
    const from = this.starts[rank] as number
    const to = this.starts[rank + 1] as number
    let slot = hashBytes(this.bytes, from, to) & this.mask
    while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask
    this.slots[slot] = rank + 1
  }
}

const NEWLINE = 0x0a
const SPACE = 0x20
const ZERO = 0x30
const PADDING = 64
const INVALID = 255

/** Base64 character code → its 6 bits; '=' → PADDING; anything else → INVALID. */
const BASE64 = (() => {
  const table = new Uint8Array(256).fill(INVALID)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i
  table['='.charCodeAt(0)] = PADDING
  return table
})()

/** Lines holding a token, and the bytes their base64 decodes to (what parse will write). */
function measure(file: Uint8Array): { lines: number; bytes: number } {
  let lines = 0
  let bytes = 0
  let inLine = false
  let inToken = false
  let chars = 0
  for (let at = 0; at <= file.length; at++) {
    const code = at < file.length ? (file[at] as number) : NEWLINE
    if (code === NEWLINE) {
      if (inLine) {
        lines++
        bytes += Math.floor((chars * 6) / 8)
      }
      inLine = false
      inToken = false
      chars = 0
    } else if (!inLine) {
      inLine = true
      inToken = code !== SPACE
      if (inToken && BASE64[code] !== PADDING) chars++
    } else if (code === SPACE) inToken = false
    else if (inToken && BASE64[code] !== PADDING) chars++
  }
  return { lines, bytes }
}

function badLine(file: Uint8Array, lineStart: number, rank: number, source: string): Error {
  const end = file.indexOf(NEWLINE, lineStart)
  const line = Buffer.from(file.subarray(lineStart, end === -1 ? file.length : Math.min(end, lineStart + 80)))
  return new Error(
    `${source}: line ${rank + 1}: expected "<base64> ${rank}", got ${JSON.stringify(line.toString('latin1'))}`,
  )
}

/** FNV-1a over bytes[start .. end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
  return hash >>> 0
}
