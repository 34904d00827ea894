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

const INITIAL_SAMPLES = 64

/**
 * The values an exact percentile needs, in a typed array that doubles as it fills: 8 bytes a value,
 * no boxed numbers, sorted once (numerically, without a comparator) when the result is read.
 */
export class Samples {
  private values = new Float64Array(INITIAL_SAMPLES)
  length = 0

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.length++] = value
  }

  /** Pushes the value unless it is null (a request without that figure). */
  pushFigure(value: number | null): void {
    if (value !== null) this.push(value)
  }

  /** The i-th value pushed. */
  at(i: number): number {
    return this.values[i] as number
  }

  /** The values so far, in push order, without a copy (valid until the next push). */
  view(): Float64Array {
    return this.values.subarray(0, this.length)
  }

  /** The values so far, sorted ascending (a copy: the sample can still grow). */
  sorted(): Float64Array {
    return this.values.slice(0, this.length).sort()
  }

  distribution(percentiles: readonly number[]): Distribution {
    return summarizeSorted(this.sorted(), percentiles)
  }
}
