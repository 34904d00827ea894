/**
 * The wall clock as a shard and the coordinator read it: the process's time origin plus its monotonic
 * time, so that record times (monotonic, see describe-run.ts) and coordination agree within a process.
 *
 * LLMBENCH_TEST_CLOCK_SHIFT_MS is for tests only: it shifts this process's wall clock by that many ms
 * (negative = behind), so one machine can play hosts whose clocks disagree. It moves the run's
 * time_origin_ms and every time said to the coordinator, never a timer. Never set it in a real run.
 */
export const TEST_CLOCK_SHIFT_ENV = 'LLMBENCH_TEST_CLOCK_SHIFT_MS'

export function testClockShiftMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[TEST_CLOCK_SHIFT_ENV]
  if (text === undefined || text.trim() === '') return 0
  const shift = Number(text)
  if (!Number.isFinite(shift))
    throw new Error(`${TEST_CLOCK_SHIFT_ENV}: expected ms, got ${JSON.stringify(text)}`)
  return shift
}

let origin: number | null = null

/**
 * Where this process's monotonic clock (performance.now(), the records' clock) starts on the wall
 * clock, within a few µs. performance.timeOrigin is not that precise: Node reads the wall clock and
 * the monotonic one apart at start-up, and a loaded host put 30 ms between them (two shards on one
 * machine then disagreed by 30 ms). Read here at the instant Date.now() ticks, the best of a few.
 */
export function wallOrigin(): number {
  if (origin !== null) return origin
  let best = Number.NEGATIVE_INFINITY
  for (let i = 0; i < 5; i++) {
    const before = Date.now()
    let now = Date.now()
    while (now === before) now = Date.now()
    // A delay between the two reads only lowers the estimate: the highest is the closest.
    best = Math.max(best, now - performance.now())
  }
  origin = best
  return origin
}

/** This process's wall clock in ms, shifted by `shiftMs`: wallOrigin() + performance.now(). */
export function wallClock(shiftMs = 0): () => number {
  const shifted = wallOrigin() + shiftMs
  return () => shifted + performance.now()
}
