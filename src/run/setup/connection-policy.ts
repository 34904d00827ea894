import { ConnectionWatch } from '../../client/connections.js'
import type { Endpoint } from '../../client/target.js'
import type { ConnectionPolicy } from '../../result/run-meta.js'
import type { RoundOutcome } from '../../schedule/level-runner.js'

/**
 * The run's connection policy, as the main thread sees it: the probes before the load (preflight,
 * calibration) watch the server's closes on a watch of their own, the load threads on theirs, and
 * whoever notices first turns reuse off; the run says so once.
 */

/** A probe waits this long after its response for the server's close (llama.cpp: ~1 ms). */
export const PROBE_CLOSE_WAIT_MS = 50

const probeWatches = new WeakMap<Endpoint, ConnectionWatch>()

/** The probes' watch of one run (keyed by its endpoint object, so runs in one process stay apart). */
export function probeWatchFor(endpoint: Endpoint): ConnectionWatch {
  let watch = probeWatches.get(endpoint)
  if (watch === undefined) {
    watch = new ConnectionWatch(endpoint.keepAlive)
    probeWatches.set(endpoint, watch)
  }
  return watch
}

export const SERVER_CLOSES_NOTICE =
  'the server closes connections right after each response (whatever its Keep-Alive headers say): connections are no longer reused, each request opens its own'

/** The policy after the probes; logs the notice when they saw the server close. */
export function policyAfterProbes(endpoint: Endpoint, log: (line: string) => void): ConnectionPolicy {
  const seen = endpoint.keepAlive && !probeWatchFor(endpoint).keepAlive
  if (seen) log(SERVER_CLOSES_NOTICE)
  return { keepalive: endpoint.keepAlive, server_closes_after_response: seen ? 'probes' : null }
}

/**
 * After a level: the load threads may have noticed what the probes did not (e.g. --no-preflight).
 * True the first time, when every thread is to stop reusing connections.
 */
export function noticeFromLoad(
  policy: ConnectionPolicy,
  outcomes: readonly RoundOutcome[],
  log: (line: string) => void,
): boolean {
  if (!policy.keepalive || policy.server_closes_after_response !== null) return false
  if (!outcomes.some((outcome) => outcome.connections?.keepalive === false)) return false
  policy.server_closes_after_response = 'load'
  log(SERVER_CLOSES_NOTICE)
  return true
}

/** Server closes seen by the level's threads, summed; undefined when no thread reported. */
export function closedByServer(outcomes: readonly RoundOutcome[]): number | undefined {
  let sum: number | undefined
  for (const outcome of outcomes) {
    if (outcome.connections !== undefined) sum = (sum ?? 0) + outcome.connections.closed_by_server
  }
  return sum
}

/** meta.client.architecture's words for connections. */
export function connectionWords(policy: ConnectionPolicy, rateMode: boolean): string {
  const reuse =
    policy.keepalive && policy.server_closes_after_response === null
      ? rateMode
        ? 'keep-alive connections reused between requests'
        : 'one keep-alive connection per stream'
      : policy.keepalive
        ? 'a new connection per request once the server was seen closing after responses'
        : 'a new connection per request (keep-alive off)'
  return rateMode ? `open loop: requests sent at their intended times; ${reuse}` : reuse
}
