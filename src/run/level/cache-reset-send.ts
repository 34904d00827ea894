import type { Dispatcher } from 'undici'
import { proxyAgentFor } from '../../client/proxy-agent.js'
import { redact } from '../../client/redact.js'
import { type Endpoint, getHeaders } from '../../client/target.js'
import { printable } from '../../printable.js'
import { serverRoot } from '../setup/server-self-read.js'
import { type CacheResetCall, enableHint } from './cache-reset.js'

/** One reset's calls together get this long: a server that stalls fails the reset, never hangs the run. */
export const CACHE_RESET_TIMEOUT_MS = 10_000
/** How much of a refusing server's answer the error quotes. */
const QUOTED_CHARS = 200

export type CacheResetOutcome = { ok: true; ms: number } | { ok: false; problem: string }

/**
 * Sends one reset: every path of the call, one after the other, on a connection of its own (undici,
 * not the load's client), with the run's headers (its key among them; never printed). Any answer
 * but 2xx, a connection error or the bound fails it, with the path, the status and the start of the
 * server's answer in one line.
 */
export async function sendCacheReset(
  endpoint: Endpoint,
  call: CacheResetCall,
  options: { timeoutMs?: number; interrupt?: AbortSignal } = {},
): Promise<CacheResetOutcome> {
  const { Agent, request } = await import('undici')
  const root = serverRoot(endpoint)
  const agent: Dispatcher = (await proxyAgentFor(root, endpoint.proxy)) ?? new Agent()
  const signals = [AbortSignal.timeout(options.timeoutMs ?? CACHE_RESET_TIMEOUT_MS)]
  if (options.interrupt !== undefined) signals.push(options.interrupt)
  const signal = AbortSignal.any(signals)
  // llama.cpp's slot action reads a JSON body: without one (no content-length) it waits for one.
  const headers = { ...getHeaders(endpoint), 'content-type': 'application/json' }
  const started = performance.now()
  try {
    for (const path of call.paths) {
      let status: number
      let answer: string
      try {
        const response = await request(`${root}${path}`, {
          method: 'POST',
          dispatcher: agent,
          headers,
          body: '{}',
          signal,
        })
        status = response.statusCode
        answer = await response.body.text()
      } catch (error) {
        const message = printable(redact((error as Error).message, endpoint.secrets))
        return { ok: false, problem: failure(call, path, `failed: ${message}`) }
      }
      if (status < 200 || status > 299) {
        // Redacted (a server may echo the key) and folded to one line.
        const quoted = printable(redact(answer, endpoint.secrets)).slice(0, QUOTED_CHARS)
        return {
          ok: false,
          problem: failure(call, path, `answered HTTP ${status}${quoted === '' ? '' : ` (${quoted})`}`),
        }
      }
    }
    return { ok: true, ms: Math.round(performance.now() - started) }
  } finally {
    // Not awaited: a stalled server must not hold the run while its sockets close.
    agent.destroy().catch(() => {})
  }
}

function failure(call: CacheResetCall, path: string, what: string): string {
  return `--reset-cache: ${call.engine}'s cache reset POST ${path} ${what}; ${enableHint(call.engine)}`
}
