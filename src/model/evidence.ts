import type { RequestRecord } from '../records/types.js'
import { DecodeEvidence, type DecodePoint } from './decode-evidence.js'
import { PrefillEvidence, type PrefillPoint } from './prefill-evidence.js'

/** What a run showed of its server's prefill and decode, for the capacity model's fit. */
export interface ModelEvidenceSeen {
  prefill: { points: readonly PrefillPoint[]; source: 'timings' | 'ttft' }
  decode: readonly DecodePoint[]
}

/** The capacity model's evidence, fed record by record as drift's is (run and report feed it alike). */
export class ModelEvidence {
  private readonly prefill: PrefillEvidence
  private readonly decode = new DecodeEvidence()

  /** `soloLevel`: the level at which one request runs alone (1 in concurrency mode), null when none. */
  constructor(soloLevel: number | null) {
    this.prefill = new PrefillEvidence(soloLevel)
  }

  add(record: RequestRecord): void {
    this.prefill.add(record)
    this.decode.add(record)
  }

  seen(): ModelEvidenceSeen {
    return { prefill: this.prefill.points(), decode: this.decode.points() }
  }
}
