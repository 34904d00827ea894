import { round } from './distribution.js'

/** A running mean of the values given, nulls skipped; null when none was given. */
export class Mean {
  private sum = 0
  private count = 0

  push(value: number | null): void {
    if (value === null) return
    this.sum += value
    this.count++
  }

  /** Rounded to `digits` decimals. */
  result(digits: number): number | null {
    if (this.count === 0) return null
    return round(this.sum / this.count, digits)
  }
}
