import type { RequestRecord } from './types.js'

/**
 * EMFILE/ENFILE: llmbench (or the machine) ran out of file descriptors, so the request never left the
 * client. That is the client's limit, not the server's failure: it makes the level client-bound.
 */
const FD_LIMIT = /\bE[MN]FILE\b/

export const RAISE_FD_LIMIT = 'raise ulimit -n (one open file per stream, plus Node’s own)'

export function hitClientFdLimit(record: RequestRecord): boolean {
  return record.error !== null && record.error.class !== 'http_4xx' && FD_LIMIT.test(record.error.message)
}

/** The client-bound reason for a level where `count` requests hit the limit; null when none did. */
export function fdLimitReason(count: number): string | null {
  if (count === 0) return null
  return `${count} request(s) failed in the client with too many open files (EMFILE/ENFILE): ${RAISE_FD_LIMIT}`
}
