/**
 * Shared between the CLI's signal handlers and the run: the first Ctrl-C asks the run to stop
 * issuing and drain; flush hooks let a second Ctrl-C write what is buffered before exiting at once.
 */
export class StopSignal {
  requested = false
  private readonly flushers = new Set<() => void>()
  private readonly listeners = new Set<() => void>()

  request(): void {
    if (this.requested) return
    this.requested = true
    for (const listener of this.listeners) listener()
  }

  /** Called once, when a stop is first requested; returns its unregister function. */
  onRequest(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
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
