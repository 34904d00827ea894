/**
 * The open-file limit (`ulimit -n`) against the widest level, checked before the run: each stream holds
 * a socket, and past the limit requests fail in the client with EMFILE, which reads like a server that
 * cannot keep up. Node has no getrlimit; Linux shows the limit in /proc/self/limits, elsewhere the
 * check is skipped.
 */
import { readFileSync } from 'node:fs'
import type { RunConfig } from '../../config/types.js'
import { RAISE_FD_LIMIT } from '../../records/client-fd-limit.js'

/** Files Node and llmbench keep open besides the streams' sockets (stdio, event loop, workers, records, modules). */
export const FD_HEADROOM = 64

/** The soft limit on open files, or null where it cannot be read (not Linux) or is unlimited. */
export function openFileLimit(limitsText?: string): number | null {
  let text = limitsText
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8')
    } catch {
      return null
    }
  }
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(text)
  if (match === null || match[1] === 'unlimited') return null
  return Number(match[1])
}

/** A warning when the widest level's streams (plus headroom) do not fit the limit; null when they do. */
export function fdLimitWarning(
  load: RunConfig['load'],
  limit: number | null = openFileLimit(),
): string | null {
  if (limit === null) return null
  const streams = load.mode === 'request_rate' ? load.max_in_flight : Math.max(0, ...load.levels)
  const needed = streams + FD_HEADROOM
  if (needed <= limit) return null
  return `warning: the open-file limit (ulimit -n) is ${limit}, and ${streams} streams need about ${needed}: requests past it fail in llmbench with EMFILE, not in the server; ${RAISE_FD_LIMIT}, e.g. ulimit -n ${Math.max(1024, needed)}`
}
