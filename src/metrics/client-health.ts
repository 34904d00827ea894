import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { ClientHealth } from './summarize.js'

/** Event-loop delay p99 above this means arrival stamps may have waited on our own loop. */
export const MAX_LOOP_DELAY_P99_MS = 20
/** Process CPU above this share of the cores it can use means the client was busy, not waiting. */
export const MAX_CPU_PERCENT = 90

/** The loop-delay sampling interval, ms. */
const SAMPLE_INTERVAL_MS = 5

/**
 * Watches this process while a level runs: its CPU time over the wall window (100% = one full core)
 * and the event-loop delay p99. Either one high means timestamps could include our own queueing.
 */
export class ClientMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: SAMPLE_INTERVAL_MS })
  private cpuStart = process.cpuUsage()
  private wallStart = performance.now()

  start(): void {
    this.histogram.reset()
    this.histogram.enable()
    this.cpuStart = process.cpuUsage()
    this.wallStart = performance.now()
  }

  stop(usableCores: number): ClientHealth {
    this.histogram.disable()
    const cpu = process.cpuUsage(this.cpuStart)
    const wallMs = Math.max(performance.now() - this.wallStart, 1)
    const cpuPercent = ((cpu.user + cpu.system) / 1000 / wallMs) * 100
    // The histogram holds whole sampling intervals in ns (an idle loop reads ~5 ms): the delay is the excess.
    const loopP99Ms =
      this.histogram.count > 0 ? Math.max(0, this.histogram.percentile(99) / 1e6 - SAMPLE_INTERVAL_MS) : 0
    return {
      cpu_percent: Math.round(cpuPercent * 10) / 10,
      event_loop_delay_p99_ms: Math.round(loopP99Ms * 100) / 100,
      bound: loopP99Ms > MAX_LOOP_DELAY_P99_MS || cpuPercent > MAX_CPU_PERCENT * usableCores,
    }
  }
}
