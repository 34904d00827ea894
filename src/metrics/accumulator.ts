import type { RequestRecord } from '../records/types.js'
import { type Distribution, summarizeSorted } from './distribution.js'

/**
 * A figure fed as records arrive and read once at the end (vegeta's Metrics.Add/Close): it keeps
 * only what its result needs (counts, sums, the values an exact percentile needs), never the record.
 */
export interface Accumulator<T> {
  add(record: RequestRecord): void
  result(): T
}

/** Feeds every record to the accumulator and reads it: an accumulator over a list already in hand. */
export function accumulate<T>(records: Iterable<RequestRecord>, accumulator: Accumulator<T>): T {
  for (const record of records) accumulator.add(record)
  return accumulator.result()
}

/** A sample's first block; it doubles up to CHUNK, then the sample grows a CHUNK-sized block at a time. */
const INITIAL_SAMPLES = 64
/** 8,192 values (64 KiB): a large sample wastes at most one block, and growing never copies what it holds. */
const CHUNK_BITS = 13
const CHUNK = 1 << CHUNK_BITS
const IN_CHUNK = CHUNK - 1

/**
 * The values an exact percentile needs, in typed-array blocks: 8 bytes a value, no boxed numbers,
 * sorted once (numerically, without a comparator) when the result is read.
 */
export class Samples {
  private readonly blocks: Float64Array[] = [new Float64Array(INITIAL_SAMPLES)]
  length = 0

  push(value: number): void {
    const index = this.length & IN_CHUNK
    let block = this.blocks[this.blocks.length - 1] as Float64Array
    if (index === block.length) block = this.grow()
    else if (index === 0 && this.length > 0) block = this.grow()
    block[index] = value
    this.length++
  }

  /** Pushes every value. */
  pushAll(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) this.push(values[i] as number)
  }

  /** Pushes the value unless it is null (a request without that figure). */
  pushFigure(value: number | null): void {
    if (value !== null) this.push(value)
  }

  /** The i-th value pushed. */
  at(i: number): number {
    return (this.blocks[i >>> CHUNK_BITS] as Float64Array)[i & IN_CHUNK] as number
  }

  /** The values so far, sorted ascending (a copy: the sample can still grow). */
  sorted(): Float64Array {
    return this.copy().sort()
  }

  /** The values so far, in push order, in one array of their own. */
  copy(): Float64Array {
    const all = new Float64Array(this.length)
    for (let b = 0; b < this.blocks.length; b++) {
      const start = b * CHUNK
      const count = Math.min(this.length - start, CHUNK)
      if (count <= 0) break
      all.set((this.blocks[b] as Float64Array).subarray(0, count), start)
    }
    return all
  }

  distribution(percentiles: readonly number[]): Distribution {
    return summarizeSorted(this.sorted(), percentiles)
  }

  /** Room for the next value: the first block doubled (up to CHUNK), or a new full block. */
  private grow(): Float64Array {
    const last = this.blocks.length - 1
    const block = this.blocks[last] as Float64Array
    if (block.length < CHUNK) {
      const grown = new Float64Array(Math.min(block.length * 2, CHUNK))
      grown.set(block)
      this.blocks[last] = grown
      return grown
    }
    const next = new Float64Array(CHUNK)
    this.blocks.push(next)
    return next
  }
}
