import { fitLine, type LineFit } from './linear-fit.js'

/**
 * The decode step time against the running batch, as the simulator models it (src/model/engine.ts):
 * step = decode_base + per_seq × batch. One point per level: its mean TPOT against the batch it ran,
 * the server's `running` gauge mean when scraped, else the requests in flight capped at the slots
 * (beyond the slots the rest wait in a queue and do not decode).
 */
export interface DecodePoint {
  tpotMs: number
  /** The server's running gauge mean, null when /metrics was not scraped. */
  running: number | null
  /** Mean requests in flight (achieved concurrency). */
  inFlight: number
}

export function decodeFit(points: readonly DecodePoint[], slots: number | null): LineFit | null {
  const batch = points.map((p) => p.running ?? (slots === null ? p.inFlight : Math.min(p.inFlight, slots)))
  return fitLine(
    batch,
    points.map((p) => p.tpotMs),
  )
}
