import { closeSync, openSync, readFileSync, readSync } from 'node:fs'

/**
 * Reads a file the user named as text, refusing binary data before reading it whole: a 500 MB file of
 * NUL bytes given as a dataset was read into memory (1.1 GB) only to fail on its first line, and the
 * message echoed the NULs. The first few KiB decide: a NUL byte or bytes that are not UTF-8 mean it is
 * not a text file (UTF-16 included, which this tool does not read).
 */

/** How much of the file is looked at before it is read whole. */
export const TEXT_PROBE_BYTES = 8192

/** The file is not text; `reason` says what was found where, for the caller's message. */
export class NotTextError extends Error {
  constructor(readonly reason: string) {
    super(`not a text file (${reason})`)
    this.name = 'NotTextError'
  }
}

/** Why `head` (the start of a file) is not UTF-8 text, or null when it is. */
export function notTextReason(head: Uint8Array): string | null {
  const nul = head.indexOf(0)
  if (nul !== -1) return `a NUL byte at byte ${nul + 1}`
  try {
    // stream: a character cut by the end of the probe is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true })
  } catch {
    return `bytes that are not UTF-8 in the first ${head.length} bytes`
  }
  return null
}

/** The file's text (a leading byte-order mark removed); fs errors are thrown as they are, binary data as NotTextError. */
export function readTextFile(path: string): string {
  const fd = openSync(path, 'r')
  try {
    const head = new Uint8Array(TEXT_PROBE_BYTES)
    // A positional read: the file position stays at 0 for the whole read below.
    const size = readSync(fd, head, 0, head.length, 0)
    const reason = notTextReason(head.subarray(0, size))
    if (reason !== null) throw new NotTextError(reason)
    const text = readFileSync(fd, 'utf8')
    // Editors on Windows may save a byte-order mark, which is part of no format we read.
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  } finally {
    closeSync(fd)
  }
}
