import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate } from './accumulator.js'

/** How a level's requests used connections. */
export interface ConnectionFigures {
  /** Requests that went out on a connection opened for them. */
  opened: number
  /** Requests that went out on a kept-alive connection. */
  reused: number
  /** Requests resent on a new connection after a reused one died before any response byte. */
  resent: number
  /** Connections the server closed right after a response without saying so; null = not watched. */
  closed_by_server: number | null
}

/** From the level's measured records, plus the closes its threads saw (not a property of any record). */
export function connectionFigures(
  records: readonly RequestRecord[],
  closedByServer: number | undefined,
): ConnectionFigures {
  return accumulate(
    records,
    connectionAccumulator(() => closedByServer),
  )
}

/** The same, fed record by record; the closes are read when the result is (the level's threads report them at its end). */
export function connectionAccumulator(
  closedByServer: () => number | undefined,
): Accumulator<ConnectionFigures> {
  let opened = 0
  let reused = 0
  let resent = 0
  return {
    add(record) {
      if (record.connection === 'new') opened++
      else if (record.connection === 'reused') reused++
      if (record.resent !== undefined) resent++
    },
    result: () => ({ opened, reused, resent, closed_by_server: closedByServer() ?? null }),
  }
}

/** A note for the level when requests had to be resent. */
export function connectionNotes(figures: ConnectionFigures): string[] {
  if (figures.resent === 0) return []
  return [
    `${figures.resent} request(s) resent on a new connection: a reused one was closed by the server before any response (not a server failure; the server closes connections after responses)`,
  ]
}
