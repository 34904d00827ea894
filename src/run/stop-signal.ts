export type RunPhase = 'set-up' | 'load' | 'report'

/**
 * Shared between the CLI's signal handlers and the run: the first Ctrl-C asks the run to stop
 * issuing and drain; flush hooks let a second Ctrl-C write what is buffered before exiting at once.
 */
export class StopSignal {
  requested = false
  /**
   * What the run is doing, set by the run as it moves on: a stop means something different in each
   * (cut the one-off request; drain the level; let the report that is being drawn finish).
   */
  private current: RunPhase = 'set-up'

  get phase(): RunPhase {
    return this.current
  }

  enter(phase: RunPhase): void {
    this.current = phase
  }

  private readonly setup = new AbortController()
  /**
   * Aborted on the first stop: the one-off requests before the load (preflight, calibration) have
   * nothing to drain into, so they are cut at once instead of waiting out their timeout.
   */
  readonly setupInterrupt: AbortSignal = this.setup.signal
  private readonly flushers = new Set<() => void>()
  private readonly listeners = new Set<() => void>()

  request(): void {
    if (this.requested) return
    this.requested = true
    this.setup.abort(new Error('interrupted before the load began: cut at once'))
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
