import { closeSync, openSync, writeSync } from 'node:fs'
import type { RequestRecord } from './types.js'

/** How often buffered records reach the file: a crash loses at most this much finished work. */
const FLUSH_INTERVAL_MS = 100
const FLUSH_BATCH = 256

/**
 * Appends records to requests.jsonl as requests finish. Lines are batched and written with one
 * synchronous write every 100 ms (or 256 records), so the hot path does no I/O per request yet
 * a crash or Ctrl-C loses at most the last fraction of a second.
 */
export class JsonlWriter {
  private readonly fd: number
  private pending: string[] = []
  private readonly timer: NodeJS.Timeout
  private closed = false

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a')
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS)
    this.timer.unref()
  }

  append(record: RequestRecord): void {
    if (this.closed) throw new Error(`records writer for ${this.path} is closed`)
    this.pending.push(JSON.stringify(record))
    if (this.pending.length >= FLUSH_BATCH) this.flush()
  }

  flush(): void {
    if (this.pending.length === 0 || this.closed) return
    const text = `${this.pending.join('\n')}\n`
    this.pending = []
    writeSync(this.fd, text)
  }

  close(): void {
    if (this.closed) return
    this.flush()
    clearInterval(this.timer)
    this.closed = true
    closeSync(this.fd)
  }
}
