import type { Dispatcher, request as undiciRequest } from 'undici'
import { proxyAgentFor } from '../../client/proxy-agent.js'
import { type Endpoint, getHeaders } from '../../client/target.js'
import type { ServerSelf } from '../../result/server-self.js'
import { describeServer } from './server-self-parse.js'

/** All the reads together get this long: an engine that stalls costs the run this, never more. */
export const SELF_READ_TIMEOUT_MS = 3_000
/** An answer larger than this is not a self-description (a /slots of many busy slots carries their prompts). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/**
 * Before the run: what the server says about itself (llama.cpp /props and /slots, /v1/models,
 * SGLang /get_server_info), read at once, on connections of their own, within `timeoutMs` in all.
 * Every read is optional: a 404, an error, a non-JSON answer or the bound is simply "unknown". The
 * run's Authorization header goes along (these paths sit behind the same key); nothing here is logged.
 */
export async function readServerSelf(
  endpoint: Endpoint,
  options: { timeoutMs?: number; interrupt?: AbortSignal } = {},
): Promise<ServerSelf | null> {
  // undici loads with this read, not with every command that imports this module.
  const { Agent, request } = await import('undici')
  // Our own controller, cleared when the reads are done: a bound or a stop that fires later must not
  // abort the bodies of answers that were already read.
  const bound = new AbortController()
  const cut = (): void => bound.abort(new Error('server self-description: cut'))
  const timer = setTimeout(cut, options.timeoutMs ?? SELF_READ_TIMEOUT_MS)
  if (options.interrupt?.aborted === true) cut()
  options.interrupt?.addEventListener('abort', cut, { once: true })
  const signal = bound.signal
  const root = serverRoot(endpoint)
  const agent = (await proxyAgentFor(root, endpoint.proxy)) ?? new Agent()
  const read = (path: string, url = `${root}${path}`) =>
    readJson(request, agent, url, getHeaders(endpoint), signal)
  try {
    const [props, slots, models, serverInfo] = await Promise.all([
      read('/props'),
      read('/slots'),
      read('/v1/models', endpoint.modelsUrl),
      read('/get_server_info'),
    ])
    return describeServer({ props, slots, models, serverInfo }, endpoint.body.model)
  } finally {
    clearTimeout(timer)
    options.interrupt?.removeEventListener('abort', cut)
    // Not awaited: a stalled server must not hold the run while its sockets close.
    agent.destroy().catch(() => {})
  }
}

/** The server's root: the base URL without its /v1 (llama.cpp and SGLang serve these paths beside /v1). */
export function serverRoot(endpoint: Endpoint): string {
  return endpoint.modelsUrl.replace(/\/v1\/models$/, '')
}

/** The parsed JSON of a 200 answer, or null for anything else (never throws). */
async function readJson(
  request: typeof undiciRequest,
  agent: Dispatcher,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<unknown> {
  try {
    const response = await request(url, { dispatcher: agent, headers, signal })
    // A body left behind (an error status, too large) is destroyed: its error has nowhere to go.
    response.body.on('error', () => {})
    if (response.statusCode !== 200) {
      response.body.destroy()
      return null
    }
    const parts: Buffer[] = []
    let bytes = 0
    for await (const part of response.body) {
      bytes += (part as Buffer).length
      if (bytes > MAX_ANSWER_BYTES) {
        response.body.destroy()
        return null
      }
      parts.push(part as Buffer)
    }
    const parsed: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'))
    return parsed ?? null
  } catch {
    return null
  }
}
