import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import type { Distribution } from './distribution.js'

/**
 * What a level's records say about the network between the client and the server: the TCP
 * handshakes of the connections opened for its requests. A handshake is one round trip (SYN out,
 * SYN-ACK back) plus the server kernel's accept, before any request byte and so in no latency
 * figure; it tells a remote endpoint's round trip from the server's own time. Null (the level's
 * `network` absent) when no request opened a timed connection (all reused, or older records).
 */
export interface NetworkFigures {
  /** TCP connect time of each connection opened for a measured request, ms (DNS not counted). */
  connect_ms: Distribution
}

export function networkFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): NetworkFigures | null {
  return accumulate(records, networkAccumulator(percentiles))
}

/** The same, fed record by record; failed requests count too: their connection was made all the same. */
export function networkAccumulator(percentiles: readonly number[]): Accumulator<NetworkFigures | null> {
  const connects = new Samples()
  let timed = 0
  return {
    add(record) {
      if (record.connect_ms === undefined) return
      connects.push(record.connect_ms)
      timed++
    },
    result: () => (timed === 0 ? null : { connect_ms: connects.distribution(percentiles) }),
  }
}
