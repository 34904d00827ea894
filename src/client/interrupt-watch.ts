/**
 * The in-flight requests that a Ctrl-C's interrupt signal cuts: one listener per signal, however
 * many requests wait on it. An AbortSignal's addEventListener and removeEventListener (Node's
 * EventTarget) cost about 10 µs a request in the profile of a 64-stream run, more than all the
 * request's other bookkeeping; a Set's add and delete cost nanoseconds.
 */

const waiting = new WeakMap<AbortSignal, Set<() => void>>()

/** Calls `cut` when `signal` aborts, unless `stopWatching` came first. As addEventListener: nothing for a signal already aborted. */
export function watchInterrupt(signal: AbortSignal, cut: () => void): void {
  let cuts = waiting.get(signal)
  if (cuts === undefined) {
    const created = new Set<() => void>()
    cuts = created
    waiting.set(signal, created)
    signal.addEventListener(
      'abort',
      () => {
        for (const each of [...created]) each()
        created.clear()
      },
      { once: true },
    )
  }
  cuts.add(cut)
}

export function stopWatching(signal: AbortSignal, cut: () => void): void {
  waiting.get(signal)?.delete(cut)
}
