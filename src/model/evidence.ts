import type { RequestRecord } from '../records/types.js'
import { DecodeEvidence, type DecodePoint } from './decode-evidence.js'
import { fitLine } from './linear-fit.js'
import { PrefillEvidence, type PrefillPoint } from './prefill-evidence.js'

/** What a run showed of its server's prefill and decode, for the capacity model's fit. */
export interface ModelEvidenceSeen {
  prefill: { points: readonly PrefillPoint[]; source: 'timings' | 'ttft' }
  /**
   * The decode step at each batch size (decode-evidence.ts): over every sampled gap (for an engine
   * whose prefills overlap decoding), and over the gaps beside no prefill (for one where they stall it).
   */
  decode: {
    overlap: readonly DecodePoint[]
    stall: readonly DecodePoint[]
    /** The same, a point per batch size and context held: where the step's growth with the context shows. */
    by_context?: { overlap: readonly DecodePoint[]; stall: readonly DecodePoint[] }
  }
}

/** The capacity model's evidence, fed record by record as drift's is (run and report feed it alike). */
export class ModelEvidence {
  private readonly prefill: PrefillEvidence
  private readonly decode = new DecodeEvidence()
  /** What seen() last returned, until the next record: a run draws its result after every level and at its end. */
  private lastSeen: ModelEvidenceSeen | null = null

  /** `soloLevel`: the level at which one request runs alone (1 in concurrency mode), null when none. */
  constructor(soloLevel: number | null) {
    this.prefill = new PrefillEvidence(soloLevel)
  }

  add(record: RequestRecord): void {
    this.lastSeen = null
    this.prefill.add(record)
    this.decode.add(record)
  }

  seen(): ModelEvidenceSeen {
    this.lastSeen ??= this.draw()
    return this.lastSeen
  }

  private draw(): ModelEvidenceSeen {
    const prefill = this.prefill.points()
    return {
      prefill,
      decode: {
        overlap: this.decode.points(),
        stall: this.decode.points(prefillLine(prefill.points)),
        by_context: {
          overlap: this.decode.points(null, true),
          stall: this.decode.points(prefillLine(prefill.points), true),
        },
      },
    }
  }
}

/** A prompt's prefill time as the points show it (a line, or a cost per token at one length): where a request's own is not known. */
function prefillLine(points: readonly PrefillPoint[]): (promptTokens: number) => number {
  const line = fitLine(
    points.map((point) => point.tokens),
    points.map((point) => point.ms),
  )
  if (line !== null) return (tokens) => Math.max(0, line.intercept + line.slope * tokens)
  const perToken =
    points.reduce((sum, point) => sum + point.ms / point.tokens, 0) / Math.max(1, points.length)
  return (tokens) => perToken * tokens
}
