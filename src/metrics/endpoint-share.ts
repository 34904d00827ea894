import type { RequestRecord } from '../records/types.js'

/**
 * One endpoint's part of a run with several (schedule/target-split.ts): its records, to be summarized
 * by the same pure summarizer as the whole run's, and what its "level" is.
 *
 * Requests, not streams, are split: in a closed loop at concurrency c each request goes to an endpoint
 * by the weights, so an endpoint receives w/Σw of the requests, and the streams it holds are its
 * nominal share c·w/Σw only while it keeps pace with the others. A slower endpoint holds each of its
 * requests longer, so more of the c streams wait on it at any moment (Little's law); the records'
 * achieved in-flight mean (metrics/in-flight.ts) says how many it really held. The knee per endpoint is
 * found over the nominal share, the x-axis a reader can set beside the run's levels.
 */

/** The endpoint a record went to; a record without a target is from a one-endpoint run: endpoint 0. */
export function endpointOf(record: RequestRecord): number {
  return record.target?.endpoint ?? 0
}

export function recordsOfEndpoint(records: Iterable<RequestRecord>, endpoint: number): RequestRecord[] {
  const mine: RequestRecord[] = []
  for (const record of records) if (endpointOf(record) === endpoint) mine.push(record)
  return mine
}

/** The streams an endpoint of weight `weight` is given at concurrency `concurrency`: c·w/Σw. */
export function endpointStreams(concurrency: number, weight: number, totalWeight: number): number {
  if (!(totalWeight > 0) || weight < 0 || weight > totalWeight) {
    throw new RangeError(`weight ${weight} of a total ${totalWeight}: expected 0 ≤ weight ≤ total, total > 0`)
  }
  return (concurrency * weight) / totalWeight
}
