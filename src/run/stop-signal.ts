/**
 * Shared between the CLI's signal handlers and the run: the first Ctrl-C asks the run to stop
 * issuing and drain; flush hooks let a second Ctrl-C write what is buffered before exiting at once.
 */
export class StopSignal {
  requested = false
  private readonly flushers = new Set<() => void>()

  request(): void {
    this.requested = true
  }

  /** Registers a flush hook; returns its unregister function. */
  onFlush(flush: () => void): () => void {
    this.flushers.add(flush)
    return () => this.flushers.delete(flush)
  }

  flushAll(): void {
    for (const flush of this.flushers) flush()
  }
}
