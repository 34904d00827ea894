import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks'

/**
 * The client watching itself. Each event loop that stamps arrivals (every worker thread) measures
 * its event-loop delay and utilisation over a level; the main thread adds the process CPU. A busy
 * loop stamps bytes late, so these decide whether a level's figures can be trusted.
 */

/** One event loop's figures over one level. */
export interface LoopStats {
  /** "worker-0", "worker-1", ... or "main" */
  thread: string
  /** Share of the level's wall time the loop spent running code (0..1). */
  utilization: number
  /** p99 of how late the loop's timer fired beyond its sampling interval, ms. */
  delay_p99_ms: number
  /** Largest such delay, ms. */
  delay_max_ms: number
}

/** Measured during a level by the runner; stored in meta so the verdict stays a pure function. */
export interface LevelClientStats {
  /** Process CPU time over the level's wall time, all threads: 100% = one full core. */
  cpu_percent: number
  /** Resident memory of the process at the end of the level, MiB: flat across levels, as records go to disk. */
  rss_mib?: number
  loops: LoopStats[]
  /** Request-rate mode: the level's arrivals, as the workers kept to them. */
  arrivals?: { planned: number; sent: number; dropped: number }
  /** Request-rate mode: the in-flight bound. */
  max_in_flight?: number
  /** Connections the server closed right after a response, as the load threads saw them. */
  connections?: { closed_by_server: number }
}

/** What a report says about the client during one level. */
export interface ClientHealth {
  cpu_percent: number
  rss_mib: number | null
  /** Worst loop. */
  event_loop_delay_p99_ms: number
  /** Busiest loop (0..1). */
  event_loop_utilization: number
  /** p99 of (sent_at - scheduled_at) over the level's requests: how late we sent. */
  dispatch_lateness_p99_ms: number | null
  /**
   * Share of the nominal streams really in flight: mean E2E / (mean E2E + mean lateness). Below 1
   * when the client waited before sending (a connection being opened; undici, when it is the
   * dispatcher, also holds a reused socket for one loop turn).
   */
  effective_concurrency_ratio: number | null
  /** The client may have distorted this level's figures. */
  bound: boolean
  /** Why it is bound, in words; empty when it is not. */
  reasons: string[]
  /** What was seen but does not make the level client-bound (e.g. a noisy machine). */
  notes: string[]
  /** Timers fired late while the client was idle: the machine's jitter is in the figures (absent in older results). */
  noisy?: boolean
}

/**
 * Thresholds from the fidelity benchmark (bench/fidelity): a thread's TTFT error stays small while
 * its loop is below ~70% busy and its timers fire within ~5 ms.
 */
export const CLIENT_LIMITS = {
  max_utilization: 0.7,
  max_delay_p99_ms: 5,
  /**
   * Loop delay counts against the client only while its loops are this busy: an idle Node process
   * on this project's VM already sees timers 2 ms late at p99 and 10 ms at worst (scheduling noise
   * of the machine, not work of ours), which `notes` reports instead.
   */
  busy_utilization: 0.3,
  min_effective_concurrency_ratio: 0.95,
} as const

/** Dispatch figures of a level, from its records. */
export interface Dispatch {
  lateness_p99_ms: number
  lateness_mean_ms: number
  e2e_mean_ms: number
}

/** How the noisy-machine note begins: the one note of client.notes that is about the client's health. */
const NOISY_MACHINE_NOTE = 'timers fired '

/** Whether a note is about the client's own health (the noisy machine), not about the server. */
export function isClientHealthNote(note: string): boolean {
  return note.startsWith(NOISY_MACHINE_NOTE)
}

export function judgeClient(stats: LevelClientStats, dispatch: Dispatch | null): ClientHealth {
  // Only the threads that stamp arrivals matter for fidelity; the main thread writes records.
  const stamping = stats.loops.filter((loop) => loop.thread !== 'main')
  const loops = stamping.length > 0 ? stamping : stats.loops
  const delay = Math.max(0, ...loops.map((loop) => loop.delay_p99_ms))
  const utilization = Math.max(0, ...loops.map((loop) => loop.utilization))
  const notes: string[] = []
  const reasons: string[] = []
  let noisy = false
  if (utilization > CLIENT_LIMITS.max_utilization) {
    reasons.push(
      `event loop ${Math.round(utilization * 100)}% busy (limit ${CLIENT_LIMITS.max_utilization * 100}%)`,
    )
  }
  const busyLoopDelay = Math.max(
    0,
    ...loops
      .filter((loop) => loop.utilization >= CLIENT_LIMITS.busy_utilization)
      .map((loop) => loop.delay_p99_ms),
  )
  if (delay > CLIENT_LIMITS.max_delay_p99_ms && busyLoopDelay <= CLIENT_LIMITS.max_delay_p99_ms) {
    noisy = true
    notes.push(
      `${NOISY_MACHINE_NOTE}${delay.toFixed(1)} ms late at p99 while the client was mostly idle: the machine is noisy ` +
        '(other processes or a virtual machine); figures may carry that much jitter',
    )
  }
  if (busyLoopDelay > CLIENT_LIMITS.max_delay_p99_ms) {
    reasons.push(
      `event-loop delay p99 ${busyLoopDelay.toFixed(1)} ms (limit ${CLIENT_LIMITS.max_delay_p99_ms} ms)`,
    )
  }
  const ratio =
    dispatch === null ? null : dispatch.e2e_mean_ms / (dispatch.e2e_mean_ms + dispatch.lateness_mean_ms)
  if (dispatch !== null && ratio !== null && ratio < CLIENT_LIMITS.min_effective_concurrency_ratio) {
    reasons.push(
      `only ${Math.round(ratio * 100)}% of the streams in flight: requests sent ` +
        `${dispatch.lateness_mean_ms.toFixed(1)} ms late on average`,
    )
  }
  return {
    cpu_percent: stats.cpu_percent,
    rss_mib: stats.rss_mib ?? null,
    event_loop_delay_p99_ms: round2(delay),
    event_loop_utilization: round2(utilization),
    dispatch_lateness_p99_ms: dispatch === null ? null : round2(dispatch.lateness_p99_ms),
    effective_concurrency_ratio: ratio === null ? null : Math.round(ratio * 1000) / 1000,
    bound: reasons.length > 0,
    reasons,
    notes,
    noisy,
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100
}

/** The loop-delay sampling interval, ms. */
const SAMPLE_INTERVAL_MS = 1

/** Measures the event loop it runs on, between start() and stop(). */
export class LoopMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: SAMPLE_INTERVAL_MS })
  private eluStart = performance.eventLoopUtilization()

  constructor(private readonly thread: string) {}

  start(): void {
    this.histogram.reset()
    this.histogram.enable()
    this.eluStart = performance.eventLoopUtilization()
  }

  stop(): LoopStats {
    this.histogram.disable()
    const elu = performance.eventLoopUtilization(this.eluStart)
    // The histogram holds whole sampling intervals in ns (an idle loop reads ~1 ms): the delay is the excess.
    const excess = (ns: number): number => Math.max(0, ns / 1e6 - SAMPLE_INTERVAL_MS)
    const sampled = this.histogram.count > 0
    return {
      thread: this.thread,
      utilization: round2(elu.utilization),
      delay_p99_ms: sampled ? round2(excess(this.histogram.percentile(99))) : 0,
      delay_max_ms: sampled ? round2(excess(this.histogram.max)) : 0,
    }
  }
}

/** Process CPU over a window: 100% = one core busy for the whole window. */
export class CpuMeter {
  private cpuStart = process.cpuUsage()
  private wallStart = performance.now()

  start(): void {
    this.cpuStart = process.cpuUsage()
    this.wallStart = performance.now()
  }

  percent(): number {
    const cpu = process.cpuUsage(this.cpuStart)
    const wallMs = Math.max(performance.now() - this.wallStart, 1)
    return Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10
  }
}
