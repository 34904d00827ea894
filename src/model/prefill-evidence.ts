import { isOk, ttftMs } from '../metrics/derive.js'
import type { RequestRecord } from '../records/types.js'

/** One request's prefill: the prompt tokens the server computed and the time they took, ms. */
export interface PrefillPoint {
  tokens: number
  ms: number
}

/**
 * The prefill evidence of a run, fed record by record: the calibration probes (one request each at
 * several prompt lengths, one output token) and the measured requests of a level of one stream, where
 * no other request shares the engine. Where the server sent llama.cpp `timings`, a point is its own
 * prompt_ms against prompt_n (cached tokens excluded); otherwise the client's TTFT against the prompt
 * tokens it was billed less those cached, which adds the network and HTTP time to the fixed cost.
 */
export class PrefillEvidence {
  private readonly timed: PrefillPoint[] = []
  private readonly untimed: PrefillPoint[] = []

  /** `soloLevel`: the level value at which one request runs alone (1 in concurrency mode), null when none. */
  constructor(private readonly soloLevel: number | null) {}

  add(record: RequestRecord): void {
    const solo = record.phase === 'measure' && record.level === this.soloLevel
    if (!(record.phase === 'calibration' || solo) || !isOk(record)) return
    if (record.attempt > 1) return // a retry is not one prefill
    const timings = record.server_timings ?? null
    if (timings?.prompt_ms != null && timings.prompt_n != null && timings.prompt_n > 0) {
      this.timed.push({ tokens: timings.prompt_n, ms: timings.prompt_ms })
      return
    }
    // Reasoning before the first streamed token puts thinking in the TTFT (the server's prompt_ms has none).
    if ((record.reasoning_output_tokens ?? 0) > 0) return
    const ttft = ttftMs(record)
    const prompt = record.input_tokens
    if (ttft === null || prompt === null || prompt <= 0) return
    this.untimed.push({ tokens: Math.max(1, prompt - (record.cached_tokens ?? 0)), ms: ttft })
  }

  /** The server's own figures where it sent them, else the client's. */
  points(): { points: readonly PrefillPoint[]; source: 'timings' | 'ttft' } {
    return this.timed.length > 0
      ? { points: this.timed, source: 'timings' }
      : { points: this.untimed, source: 'ttft' }
  }
}
