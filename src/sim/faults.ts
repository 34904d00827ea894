import { seededRandom } from '../random.js'

/**
 * Faults the simulator can inject, each with the share of requests it hits
 * (`llmbench sim --fault 429:0.1,disconnect:0.05`). Seeded: the same seed injects the same faults
 * into the same requests.
 */
export const FAULT_KINDS = [
  '401',
  '403',
  '404',
  '429',
  '500',
  '502',
  '503',
  /** Connection reset before any response byte. */
  'reset',
  /** Headers only after a delay (FAULT_DELAY_MS). */
  'slow-headers',
  /** The connection drops halfway through the stream. */
  'disconnect',
  /** A chunk that is not JSON, halfway through. */
  'malformed',
  /** OpenAI/vLLM style `data: {"error": ...}` inside a 200 stream, then [DONE]. */
  'error-event',
  /** llama.cpp style `error: {...}` field inside a 200 stream, then [DONE]. */
  'error-field',
  /** The stream stops for FAULT_STALL_MS halfway, then goes on. */
  'stall',
  /** Every token, then neither finish_reason nor [DONE], and the connection stays open. */
  'no-done',
  /** A 200 whose body is an HTML page, not an event stream. */
  'non-sse',
  /** One SSE event of FAULT_OVERSIZED_BYTES. */
  'oversized',
] as const

export type FaultKind = (typeof FAULT_KINDS)[number]

export interface FaultRate {
  kind: FaultKind
  rate: number
}

export const FAULT_DELAY_MS = 2_000
export const FAULT_STALL_MS = 30_000
export const FAULT_OVERSIZED_BYTES = 12 * 1024 * 1024

/** "429:0.1,disconnect:0.05" → rates; an error message naming the bad part otherwise. */
export function parseFaults(text: string): FaultRate[] | string {
  const faults: FaultRate[] = []
  for (const part of text.split(',')) {
    const [kind = '', rateText = ''] = part.trim().split(':')
    const rate = Number(rateText)
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      return `--fault: unknown kind ${JSON.stringify(kind)}; expected one of ${FAULT_KINDS.join(', ')}`
    }
    if (rateText === '' || !(rate >= 0 && rate <= 1)) {
      return `--fault: ${kind}: expected a rate between 0 and 1 (e.g. ${kind}:0.1), got ${JSON.stringify(rateText)}`
    }
    faults.push({ kind: kind as FaultKind, rate })
  }
  const total = faults.reduce((sum, fault) => sum + fault.rate, 0)
  if (total > 1) return `--fault: the rates add up to ${total}, more than 1`
  return faults
}

/** Draws the fault (or none) of each request in turn, from a seeded stream. */
export class FaultPicker {
  private readonly random: () => number

  constructor(
    private readonly faults: readonly FaultRate[],
    seed: number,
  ) {
    this.random = seededRandom(seed ^ 0x5eed)
  }

  next(): FaultKind | null {
    if (this.faults.length === 0) return null
    let draw = this.random()
    for (const fault of this.faults) {
      if (draw < fault.rate) return fault.kind
      draw -= fault.rate
    }
    return null
  }
}
