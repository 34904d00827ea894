/**
 * A continuous ramp's stream starts (--ramp): stream i of `streams` first sends at i/streams of
 * `spanMs`, so the streams held rise by one every spanMs/streams, from 1 at the start to all of them
 * over the last slice. After its first request a stream runs closed-loop as any other.
 */
export function rampStarts(streams: number, spanMs: number): Float64Array {
  return Float64Array.from({ length: streams }, (_, i) => (i * spanMs) / streams)
}

/** Streams held `offsetMs` into the ramp (after the last start: all of them). */
export function rampStreamsAt(streams: number, spanMs: number, offsetMs: number): number {
  return Math.min(streams, Math.max(1, Math.floor((offsetMs * streams) / spanMs) + 1))
}
