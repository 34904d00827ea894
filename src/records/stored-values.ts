import { z } from '../zod.js'

/**
 * The leaves of the schemas a result folder is read back with (requests.jsonl, server-metrics.jsonl,
 * bench_result.json). A folder may have been edited, copied half-way or written by another tool:
 * a number stored as a string ("0444") was read as text, concatenated and compared, and a tampered
 * folder passed `compare` as "No regression". Each leaf carries the phrase that follows "expected"
 * in the message (schema-issue.ts), so a refusal reads like the config errors.
 */

/** Beyond this a double no longer holds every integer: no figure or time of a run gets near it. */
const LARGEST = Number.MAX_SAFE_INTEGER

const phrase = (error: string) => ({ error })

/** A finite number within ±2^53: zod refuses Infinity (a 1e999 in the file) on its own. */
export function aNumber(what = 'a number') {
  const range = phrase(`${what} between -${LARGEST} and ${LARGEST}`)
  return z.number(phrase(what)).min(-LARGEST, range).max(LARGEST, range)
}

/** A whole number of things: never negative, never fractional, never a string of digits. */
export function aCount(what = 'a non-negative integer') {
  return z.number(phrase(what)).int(phrase(what)).min(0, phrase(what))
}

/** An integer that may be negative (probes are numbered -1). */
export function anInteger() {
  return z.number(phrase('an integer')).int(phrase('an integer'))
}

export function aString() {
  return z.string(phrase('a string'))
}

export function aBoolean() {
  return z.boolean(phrase('true or false'))
}

/** One of `values`, spelled as the file would hold them. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(
    values,
    phrase(
      values
        .map((value) => JSON.stringify(value))
        .join(', ')
        .replace(/, ([^,]+)$/, ' or $1'),
    ),
  )
}

/** An object with these keys typed; keys it does not name are kept as they are (newer versions add some). */
export function anObject<S extends z.core.$ZodLooseShape>(shape: S, what = 'an object') {
  return z.looseObject(shape, phrase(what))
}

export function aList<T extends z.ZodType>(item: T, what = 'a list') {
  return z.array(item, phrase(what))
}

/** An object of any keys whose values are all `value`. */
export function aTable<T extends z.ZodType>(value: T, what = 'an object') {
  return z.record(z.string(), value, phrase(what))
}
