import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readSseFixture } from './fixtures.js'

/** One request as the server saw it: where auth and headers really ended up. */
export interface SeenRequest {
  method: string
  /** Path and query as sent. */
  url: string
  headers: IncomingHttpHeaders
}

export interface HeaderServer {
  /** http://127.0.0.1:PORT (no path). */
  origin: string
  seen: SeenRequest[]
  close(): Promise<void>
}

/**
 * A loopback server that records the method, URL and headers of every request (POSTs, the model
 * list, /metrics) and answers like an OpenAI-compatible server: GET /…/models with one model, any other
 * GET with 404, a POST with a recorded chat stream that has usage, or `fail(request)` when it gives
 * a status and a body (e.g. a 401 that echoes the key, as some gateways do).
 */
export async function startHeaderServer(
  options: { fail?: (request: SeenRequest) => { status: number; body: string } | null } = {},
): Promise<HeaderServer> {
  const seen: SeenRequest[] = []
  const stream = readSseFixture('openai_gpt4o_text_usage.sse')
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers }
      seen.push(request)
      const failure = options.fail?.(request) ?? null
      if (failure !== null) {
        res.writeHead(failure.status, { 'content-type': 'application/json' })
        res.end(failure.body)
      } else if (req.method === 'GET' && /\/models(\?|$)/.test(request.url)) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }))
      } else if (req.method === 'GET') {
        res.writeHead(404)
        res.end()
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(stream)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
