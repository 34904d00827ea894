import { performance } from 'node:perf_hooks'

/**
 * Time as a dependency. Code that waits (the simulator's engine, the load generator's level runner)
 * takes a Scheduler instead of calling performance.now()/setTimeout, so the program runs on real
 * time and the tests on a VirtualClock (src/model/engine.ts) that moves only when told to.
 */
export interface Scheduler<T> {
  /** ms, monotonic. */
  now(): number
  after(ms: number, fn: () => void): T
  cancel(timer: T): void
}

/**
 * Real time: performance.now() (the run clock every record is stamped on; worker threads share its
 * origin) and Node timers. A plain object, so a call costs what the direct call costs.
 */
export const REAL_TIME: Scheduler<NodeJS.Timeout> = {
  now: () => performance.now(),
  after: (ms, fn) => setTimeout(fn, ms),
  cancel: (timer) => clearTimeout(timer),
}
