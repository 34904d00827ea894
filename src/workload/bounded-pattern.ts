import { setFlagsFromString } from 'node:v8'
import { isObject } from '../json-object.js'

/**
 * A JSON Schema's `pattern` is matched against whatever the server answers, on the main thread. A
 * pattern like `^(a+)+$` backtracks exponentially on `aaaa…!` and froze a run beyond its timeout
 * and its second Ctrl-C (issue 36). V8 can match in linear time the patterns that need no
 * backtracking state (no backreferences, no lookarounds): with the flag below, a match that
 * backtracks too long falls back to that engine, and a schema whose patterns it cannot take is
 * refused before anything is sent. Flags are V8's, set once for the process; the fallback only
 * changes how a pathological match is run, never its answer.
 */
setFlagsFromString('--enable-experimental-regexp-engine')
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks')

/** The first pattern of the schema (with its path) that cannot be matched in bounded time; null when none. */
export function unboundedPattern(schema: unknown, path = ''): { path: string; pattern: string } | null {
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) {
      const found = unboundedPattern(item, `${path}[${i}]`)
      if (found !== null) return found
    }
    return null
  }
  if (!isObject(schema)) return null
  for (const [key, value] of Object.entries(schema)) {
    const at = path === '' ? key : `${path}.${key}`
    if (key === 'pattern' && typeof value === 'string' && !linear(value)) return { path: at, pattern: value }
    if (key === 'patternProperties' && isObject(value))
      for (const name of Object.keys(value))
        if (!linear(name)) return { path: `${at}.${name}`, pattern: name }
    const found = unboundedPattern(value, at)
    if (found !== null) return found
  }
  return null
}

function linear(pattern: string): boolean {
  try {
    new RegExp(pattern, 'l')
    return true
  } catch {
    // Not linear, or not a pattern at all: either way not one to match a server's answer with.
    return false
  }
}
