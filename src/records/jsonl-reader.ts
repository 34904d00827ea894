import { closeSync, openSync, readSync } from 'node:fs'
import type { RequestRecord } from './types.js'

export interface ReadRecords {
  records: RequestRecord[]
  /** A last line cut short by a crash is tolerated and reported here, not thrown. */
  tornLastLine: boolean
}

/** How much of the file is in memory at once while it is read. */
const CHUNK_BYTES = 1 << 20
const NEWLINE = 0x0a

/**
 * Calls `onLine` with each line of a file and its number (1-based), the last one also when it has
 * no newline. The file is read a chunk at a time, never as one string: a long run's requests.jsonl
 * can pass V8's longest string (~512 MiB), and a report should not hold the text beside the records.
 * Lines are cut at the newline byte, which never occurs inside a UTF-8 character.
 */
export function forEachLine(
  path: string,
  onLine: (line: string, number: number, last: boolean) => void,
  chunkBytes = CHUNK_BYTES,
): void {
  const fd = openSync(path, 'r')
  try {
    let buffer: Buffer = Buffer.allocUnsafe(chunkBytes)
    let held = 0
    let number = 0
    for (;;) {
      if (held === buffer.length) buffer = grow(buffer, held)
      const read = readSync(fd, buffer, held, buffer.length - held, null)
      const end = held + read
      let start = 0
      for (let newline = buffer.indexOf(NEWLINE, start); newline !== -1 && newline < end; ) {
        number++
        onLine(buffer.toString('utf8', start, newline), number, false)
        start = newline + 1
        newline = buffer.indexOf(NEWLINE, start)
      }
      if (read === 0) {
        if (end > start) onLine(buffer.toString('utf8', start, end), number + 1, true)
        return
      }
      // The start of a line the next chunk completes moves to the front.
      buffer.copy(buffer, 0, start, end)
      held = end - start
    }
  } finally {
    closeSync(fd)
  }
}

/** A line longer than the buffer: twice the room, the held part kept. */
function grow(buffer: Buffer, held: number): Buffer {
  const larger = Buffer.allocUnsafe(buffer.length * 2)
  buffer.copy(larger, 0, 0, held)
  return larger
}

/**
 * Reads requests.jsonl back. A malformed line other than the last one is an error with its number; a
 * last line cut short by a crash (a malformed line with no record after it) is skipped and reported.
 */
export function readRecords(path: string): ReadRecords {
  const records: RequestRecord[] = []
  // A malformed line is an error only once a later record shows it was not the last.
  let malformed: number | null = null
  forEachLine(path, (line, number) => {
    if (line.trim() === '') return
    if (malformed !== null) throw new Error(`${path}: line ${malformed} is not a JSON record`)
    try {
      records.push(JSON.parse(line) as RequestRecord)
    } catch {
      malformed = number
    }
  })
  return { records, tornLastLine: malformed !== null }
}

/** The lines of a JSONL file that could not be used: how many, and the first one with what is wrong. */
export interface BadLines {
  count: number
  first: { line: number; problem: string }
}

export interface CheckedLines<T> {
  items: T[]
  /** The last line was not JSON: cut short by a crash, left out and said apart from bad lines. */
  tornLastLine: boolean
  /** null when every line was used. */
  bad: BadLines | null
}

/**
 * Reads a JSONL file, each line checked by `check` (null when the value is usable, else what is
 * wrong with it, "PATH: expected ..., got ..."). A bad line is collected, not thrown, so the caller
 * decides whether the good lines are enough (report) or one bad line refuses the file (compare).
 * A last line that is not JSON is a record a crash cut short, as readRecords has it.
 */
export function readCheckedLines<T>(path: string, check: (value: unknown) => string | null): CheckedLines<T> {
  const items: T[] = []
  let bad: BadLines | null = null
  const refuse = (line: number, problem: string): void => {
    if (bad === null) bad = { count: 1, first: { line, problem } }
    else bad.count++
  }
  // Not JSON: bad once a later line shows it was not the last.
  let notJson: number | null = null
  forEachLine(path, (text, number) => {
    if (text.trim() === '') return
    if (notJson !== null) refuse(notJson, 'not JSON')
    notJson = null
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      notJson = number
      return
    }
    const problem = check(value)
    if (problem === null) items.push(value as T)
    else refuse(number, problem)
  })
  return { items, tornLastLine: notJson !== null, bad }
}
