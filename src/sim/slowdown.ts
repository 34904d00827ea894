import type { SimParams } from '../model/engine.js'

/**
 * A server that gets slower in the middle of a run, as one does when another tenant or a CPU hog
 * takes its cores: from generation request `after_requests` + 1 on, every prefill and decode cost is
 * `factor` times what it was. Deterministic (counted in requests, not time), for tests of the drift
 * control (analysis/drift.ts).
 */
export interface SimSlowdown {
  after_requests: number
  factor: number
}

export function checkSlowdown(slowdown: SimSlowdown | undefined): SimSlowdown | null {
  if (slowdown === undefined) return null
  const { after_requests, factor } = slowdown
  if (!(Number.isInteger(after_requests) && after_requests >= 0))
    throw new RangeError(`slowdown.after_requests must be a non-negative integer, got ${after_requests}`)
  if (!(Number.isFinite(factor) && factor > 0))
    throw new RangeError(`slowdown.factor must be a positive number, got ${factor}`)
  return slowdown
}

/** Called with each generation request's number (from 1): the engine's costs change when it is the first slow one. */
export function slowDownAt(params: SimParams, slowdown: SimSlowdown | null, requestNo: number): void {
  if (slowdown === null || requestNo !== slowdown.after_requests + 1) return
  params.prefill_base_ms *= slowdown.factor
  params.prefill_ms_per_token *= slowdown.factor
  params.decode_base_ms *= slowdown.factor
  params.decode_ms_per_seq *= slowdown.factor
  params.prefill_ms_per_token_sq *= slowdown.factor
  params.decode_ms_per_context_token *= slowdown.factor
}
