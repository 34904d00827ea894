/**
 * How deep a user's JSON file nests, found by a flat scan before anything recursive reads it. JSON
 * parsers, our tree walkers and zod's validation all recurse once per level: a file nested a few
 * thousand deep (`{"a":{"a":...}}`, `[[[[...]]]]`) overflowed the stack and ended in an internal
 * error with a stack trace. Real files are shallow (settings.json about 4 levels, a ShareGPT dump
 * 4), so the limits below refuse only files that are not what they claim to be.
 */

/** Most levels of `{`/`[` in settings.json (docs/configuration.md). */
export const CONFIG_MAX_NESTING = 64
/**
 * Most levels of `{`/`[` in a dataset or session file (per JSONL line or JSON file) or a tokenizer.json
 * (docs/workloads.md).
 */
export const DATASET_MAX_NESTING = 128

export interface TooDeep {
  /** Offset of the bracket that opened one level more than allowed. */
  offset: number
  /** 1-based line of that bracket. */
  line: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const SLASH = 0x2f
const STAR = 0x2a
const NEWLINE = 0x0a
const OPENERS = new Set([0x7b, 0x5b]) // { [
const CLOSERS = new Set([0x7d, 0x5d]) // } ]

/**
 * The first bracket that nests deeper than `limit`, or null. Brackets inside double-quoted strings and
 * JSONC comments (`//`, `/* *\/`) do not count; a closer never takes the depth below zero, so broken
 * files are left to the parser's own message. One pass, no recursion, no allocation.
 */
export function tooDeep(text: string, limit: number): TooDeep | null {
  let depth = 0
  let line = 1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === NEWLINE) line++
    else if (c === QUOTE) {
      // Skip the string; JSON strings hold no raw newline, so one that runs on is cut at the line's end.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i)
        if (s === BACKSLASH) i++
        else if (s === QUOTE) break
        else if (s === NEWLINE) {
          line++
          break
        }
      }
    } else if (c === SLASH && text.charCodeAt(i + 1) === SLASH) {
      const end = text.indexOf('\n', i)
      i = end === -1 ? text.length : end - 1
    } else if (c === SLASH && text.charCodeAt(i + 1) === STAR) {
      const end = text.indexOf('*/', i + 2)
      const stop = end === -1 ? text.length : end + 1
      for (let j = i; j < stop; j++) if (text.charCodeAt(j) === NEWLINE) line++
      i = stop
    } else if (OPENERS.has(c)) {
      depth++
      if (depth > limit) return { offset: i, line }
    } else if (CLOSERS.has(c) && depth > 0) depth--
  }
  return null
}

/** The words every message about a too-deep file uses; the caller says where. */
export function nestingMessage(limit: number): string {
  return `nested deeper than ${limit} levels of { or [ (real files nest a few levels)`
}
