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

/** This process's wall clock in ms, shifted by `shiftMs`. */
export function wallClock(shiftMs = 0): () => number {
  const origin = performance.timeOrigin + shiftMs
  return () => origin + performance.now()
}
