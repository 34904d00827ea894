import { closeSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs'
import { DiskFullError, isNoSpace } from './disk-full.js'
import type { RequestRecord } from './types.js'

/** How often buffered records reach the file: a crash loses at most this much finished work. */
const FLUSH_INTERVAL_MS = 100
const FLUSH_BATCH = 256

/**
 * Appends records to requests.jsonl as requests finish. Lines are batched and written with one
 * synchronous write every 100 ms (or 256 records), so the hot path does no I/O per request yet
 * a crash or Ctrl-C loses at most the last fraction of a second.
 *
 * A write that fails (disk full) never throws out of the timer: the file is cut back to its last
 * complete line, later records are dropped, and `onFailure` is told once (the run then stops).
 */
export class JsonlWriter {
  private readonly fd: number
  private pending: string[] = []
  private readonly timer: NodeJS.Timeout
  private closed = false
  /** Bytes in the file that end with a complete line. */
  private size: number
  /** The write that failed, once one has: nothing more is written. */
  failure: Error | null = null

  constructor(
    readonly path: string,
    private readonly onFailure: (error: Error) => void = () => {},
  ) {
    this.fd = openSync(path, 'a')
    this.size = statSync(path).size
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS)
    this.timer.unref()
  }

  append(record: RequestRecord): void {
    if (this.closed) throw new Error(`records writer for ${this.path} is closed`)
    if (this.failure !== null) return
    this.pending.push(JSON.stringify(record))
    if (this.pending.length >= FLUSH_BATCH) this.flush()
  }

  flush(): void {
    if (this.pending.length === 0 || this.closed || this.failure !== null) return
    const text = Buffer.from(`${this.pending.join('\n')}\n`)
    this.pending = []
    try {
      // One writeSync may write only part of the text (a disk filling up): write the rest.
      let written = 0
      while (written < text.length) written += writeSync(this.fd, text, written)
      this.size += text.length
    } catch (error) {
      this.fail(error)
    }
  }

  private fail(error: unknown): void {
    // A torn last line would make the file unreadable to a strict reader: cut back to the last
    // complete one (truncating frees space, so it works on a full disk).
    try {
      ftruncateSync(this.fd, this.size)
    } catch {
      // The file keeps its torn line; readers already tolerate one at the end.
    }
    this.failure = isNoSpace(error) ? new DiskFullError(this.path) : (error as Error)
    this.onFailure(this.failure)
  }

  close(): void {
    if (this.closed) return
    this.flush()
    clearInterval(this.timer)
    this.closed = true
    closeSync(this.fd)
  }
}
