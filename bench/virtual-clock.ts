/**
 * The capacity model's virtual time, side by side in one run (compare ratios; the machine is shared
 * and noisy): `predict`, the report's "What if" and every result's fit run the engine through
 * VirtualClock. Contestants, on the same closed-loop levels of a long workload:
 *   - heap:  VirtualClock as it is (a binary heap of timers);
 *   - scan:  the clock it replaced, which scanned every pending timer for the next one.
 * Run: npm run bench:virtual-clock
 */
import { performance } from 'node:perf_hooks'
import type { Scheduler } from '../src/clock.js'
import { resolveSimParams, simulateClosedLoop, VirtualClock } from '../src/model/engine.js'

/** The clock before: a Map scanned in full for the earliest timer at every event. */
class ScanningClock implements Scheduler<number> {
  private t = 0
  private seq = 0
  private readonly timers = new Map<number, { at: number; fn: () => void }>()
  now(): number {
    return this.t
  }
  after(ms: number, fn: () => void): number {
    const id = ++this.seq
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn })
    return id
  }
  cancel(timer: number): void {
    this.timers.delete(timer)
  }
  runAll(): void {
    for (;;) {
      let bestId = -1
      let bestAt = Number.POSITIVE_INFINITY
      for (const [id, timer] of this.timers)
        if (timer.at < bestAt) {
          bestAt = timer.at
          bestId = id
        }
      const timer = this.timers.get(bestId)
      if (timer === undefined) return
      this.timers.delete(bestId)
      this.t = bestAt
      timer.fn()
    }
  }
}

const LEVELS = [16, 64, 256]
/** A large GPU server: 256 sequences at once (vLLM's default max_num_seqs), every stream holding a timer. */
const PARAMS = resolveSimParams({ slots: 256 })
const LOAD = { requests: 400, inputTokens: 2048, outputTokens: 256 }
const ROUNDS = 3

function timeLevel(
  concurrency: number,
  clock: () => Scheduler<number> & { runAll(): void },
): { ms: number; tput: number } {
  const start = performance.now()
  const predicted = simulateClosedLoop(PARAMS, { concurrency, ...LOAD }, [50, 95], clock())
  return { ms: performance.now() - start, tput: predicted.output_tokens_per_s }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number

console.log(
  `closed loop of ${LOAD.requests} requests, ${LOAD.inputTokens}/${LOAD.outputTokens} tokens; median of ${ROUNDS} rounds, ms`,
)
console.log('streams  heap ms  scan ms  scan/heap  same result')
for (const concurrency of LEVELS) {
  const heap: number[] = []
  const scan: number[] = []
  let same = true
  for (let round = 0; round < ROUNDS; round++) {
    const a = timeLevel(concurrency, () => new VirtualClock())
    const b = timeLevel(concurrency, () => new ScanningClock())
    heap.push(a.ms)
    scan.push(b.ms)
    same &&= a.tput === b.tput
  }
  console.log(
    `${String(concurrency).padStart(7)}  ${median(heap).toFixed(1).padStart(7)}  ${median(scan).toFixed(1).padStart(7)}  ${(median(scan) / median(heap)).toFixed(1).padStart(9)}  ${same}`,
  )
}
