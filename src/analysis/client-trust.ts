import { type ClientHealth, isClientHealthNote } from '../metrics/client-health.js'

type Client = Pick<ClientHealth, 'bound' | 'reasons' | 'notes' | 'noisy'> &
  Partial<Pick<ClientHealth, 'event_loop_delay_p99_ms'>>

/**
 * Why a level's figures may carry the client's own distortion, in words; null when the client held
 * up. Client-bound levels queue inside the client; on a noisy machine timers fire late while the
 * client idles. Either way a difference between two runs may be the client's, not the server's.
 */
export function untrustedClient(client: Client | undefined): string | null {
  if (client === undefined) return null
  if (client.bound) return `client-bound (${client.reasons.join('; ')})`
  // Only notes about the client's health make a level noisy (results from before `noisy`) or belong
  // in the reason; notes about the server (connections, events) live in the level's own `notes`.
  const health = client.notes.filter(isClientHealthNote)
  if (client.noisy ?? health.length > 0)
    return `noisy client${health.length > 0 ? ` (${health.join('; ')})` : ''}`
  return null
}

/** A compared level's client health in both runs: why it is inconclusive, or null when both held up. */
export function inconclusiveReason(base: Client | undefined, next: Client | undefined): string | null {
  const reasons = [
    ...(untrustedClient(base) === null ? [] : [`base run: ${untrustedClient(base)}`]),
    ...(untrustedClient(next) === null ? [] : [`new run: ${untrustedClient(next)}`]),
  ]
  return reasons.length === 0 ? null : reasons.join('; ')
}

/**
 * A --paired level's client health, for the one run that measured both targets: the reason names the
 * paired mode and says both targets shared this client (not "base run" and "new run": there was one
 * run, one client). Loaded together (`together`) both sides waited on it in the same seconds;
 * in turns (`interleave`, the figures of the busiest block) it drove one side at a time. Either way
 * a difference between A and B may be the client's own. Null when it held up.
 */
export function pairedInconclusiveReason(
  client: Client | undefined,
  mode: 'interleave' | 'together',
): string | null {
  const why = untrustedClient(client)
  if (why === null) return null
  return mode === 'together'
    ? `${why}, with A and B loaded together (--paired-mode together): both targets shared this one client at the same time, so whatever it added sits in both sides of every pair`
    : `${why} in a block of this level (--paired-mode interleave): A and B took turns on this one client, so what it added may sit in one side of a pair only`
}

/**
 * How much latency a noisy machine may have added to a level's figures in either run: the sum of
 * the two runs' late timers at p99 (a noisy run's own, 0 for a quiet one). Null when a client was
 * bound, or was noisy without saying how late its timers were: then no size of change clears it.
 */
export function clientJitterMs(base: Client | undefined, next: Client | undefined): number | null {
  let jitter = 0
  for (const client of [base, next]) {
    if (client === undefined || untrustedClient(client) === null) continue
    if (client.bound || client.event_loop_delay_p99_ms === undefined) return null
    jitter += client.event_loop_delay_p99_ms
  }
  return jitter
}
