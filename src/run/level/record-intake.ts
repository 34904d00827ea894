/** How long one turn of the main thread's event loop may spend completing records before it yields. */
const TURN_BUDGET_MS = 8
/** Completed records dropped from the front of the queue once this many are done. */
const COMPACT_AFTER = 1024

/**
 * Records from the worker threads, completed (token counts, lengths asked for) in turns of a few
 * milliseconds rather than all at once as their batches arrive. Node hands a thread's queued
 * messages over in one callback, so when completing a record is costly (megabytes of text to count)
 * and the main thread falls behind, handling every batch inside that callback kept the signal
 * handlers waiting for the whole backlog: a SIGTERM in CI took effect only after the level's 200
 * requests were all sent. Here each batch is only queued; the work runs in setImmediate turns, so a
 * signal (and the stop it posts to the threads) gets its turn between them.
 */
export class RecordIntake<T> {
  private readonly queue: T[] = []
  private head = 0
  private scheduled = false
  private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = []
  private failure: { error: unknown } | null = null

  constructor(private readonly complete: (item: T) => void) {}

  push(items: readonly T[]): void {
    if (this.failure !== null) return
    for (const item of items) this.queue.push(item)
    if (!this.scheduled && this.pending > 0) {
      this.scheduled = true
      setImmediate(this.turn)
    }
  }

  get pending(): number {
    return this.queue.length - this.head
  }

  /** Resolves once every record pushed so far is completed. */
  drained(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure.error)
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
  }

  /** Completes everything queued now, synchronously (a second Ctrl-C: write what there is, then quit). */
  drainNow(): void {
    while (this.head < this.queue.length) this.completeNext()
    this.settle()
  }

  private readonly turn = (): void => {
    this.scheduled = false
    const until = performance.now() + TURN_BUDGET_MS
    try {
      while (this.head < this.queue.length && performance.now() < until) this.completeNext()
    } catch (error) {
      // A record that cannot be completed is a defect: it reaches whoever awaits the level, not
      // an uncaught exception in a timer.
      this.failure ??= { error }
      this.settle()
      return
    }
    if (this.head > COMPACT_AFTER && this.head * 2 > this.queue.length) {
      // Falling behind for a whole level must not keep every completed record alive.
      this.queue.splice(0, this.head)
      this.head = 0
    }
    if (this.pending > 0) {
      this.scheduled = true
      setImmediate(this.turn)
      return
    }
    this.settle()
  }

  private completeNext(): void {
    const item = this.queue[this.head] as T
    this.head++
    this.complete(item)
  }

  private settle(): void {
    this.queue.length = 0
    this.head = 0
    const waiters = this.waiters
    this.waiters = []
    const failure = this.failure
    for (const { resolve, reject } of waiters) {
      if (failure === null) resolve()
      else reject(failure.error)
    }
  }
}
