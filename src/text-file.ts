import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs'

/**
 * Reads a file the user named as text, refusing binary data before reading it whole: a 500 MB file of
 * NUL bytes given as a dataset was read into memory (1.1 GB) only to fail on its first line, and the
 * message echoed the NULs. The first few KiB decide: a NUL byte or bytes that are not UTF-8 mean it is
 * not a text file (UTF-16 included, which this tool does not read).
 *
 * Only a regular file is read. Opening a named pipe (FIFO) for reading waits in the OS until
 * something writes to it: a dataset given as a FIFO with no writer held the process there for good,
 * deaf to SIGTERM and Ctrl-C (the main thread never returned to the event loop). What is not a
 * regular file is refused by name before it is read; `<(cat data.jsonl)` is such a pipe, and the
 * message says to give the file itself.
 */

/** How much of the file is looked at before it is read whole. */
export const TEXT_PROBE_BYTES = 8192

/** The file is not text; `reason` says what was found where, for the caller's message. */
export class NotTextError extends Error {
  constructor(
    readonly reason: string,
    message = `not a text file (${reason})`,
  ) {
    super(message)
    this.name = 'NotTextError'
  }
}

/**
 * The file is not a regular file: `kind` says what it is ("a named pipe (FIFO)", "a directory", ...);
 * the message reads after the file's name ("data.jsonl: is a directory, not a regular file").
 */
export class NotRegularFileError extends NotTextError {
  constructor(readonly kind: string) {
    const hint = kind === FIFO ? PIPE_HINT : ''
    super(`${kind}${hint}`, `is ${kind}, not a regular file${hint}`)
    this.name = 'NotRegularFileError'
  }
}

const FIFO = 'a named pipe (FIFO)'
const PIPE_HINT =
  ': reading it would wait for a writer; give the file itself (a pipe such as <(cat FILE) is one too)'

/** What is at `path`, in words for a message, following links; null when nothing is. */
export function fileKind(path: string): string | null {
  const stats = statSync(path, { throwIfNoEntry: false })
  return stats === undefined ? null : kindOf(stats)
}

function kindOf(stats: Stats): string {
  if (stats.isFile()) return 'a regular file'
  if (stats.isDirectory()) return 'a directory'
  if (stats.isFIFO()) return FIFO
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  return 'not a file'
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
  // Refused by its stat, never opened; and opened without blocking, so a FIFO put in its place
  // between the two is caught by fstat instead of waiting for a writer.
  const kind = fileKind(path)
  if (kind !== null && kind !== 'a regular file') throw new NotRegularFileError(kind)
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const opened = kindOf(fstatSync(fd))
    if (opened !== 'a regular file') throw new NotRegularFileError(opened)
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
