import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

export interface Replay {
  status?: number
  /** Content type to send; null sends none (as openai-api-mock does). */
  contentType?: string | null
  body: Buffer
  /** Bytes per write; each write is a separate TCP segment thanks to setNoDelay + a pause. */
  chunkBytes?: number
  /** Pause between writes, ms. */
  gapMs?: number
}

export interface ReplayServer {
  url: string
  /** Request bodies received, parsed. */
  requests: unknown[]
  /** Authorization headers received (to check the key is sent, and only to the server). */
  authorizations: (string | undefined)[]
  close(): Promise<void>
}

/** A real HTTP (or HTTPS, given a key and certificate) server on 127.0.0.1 that answers every POST with a recorded body, in pieces. */
export async function startReplayServer(
  pick: (path: string) => Replay,
  options: { tls?: { key: Buffer; cert: Buffer } } = {},
): Promise<ReplayServer> {
  const requests: unknown[] = []
  const authorizations: (string | undefined)[] = []
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8')
      requests.push(text === '' ? null : JSON.parse(text))
      authorizations.push(req.headers.authorization)
      void serve(res, pick(req.url ?? '/'))
    })
  }
  const server: Server =
    options.tls === undefined ? createServer(handler) : createTlsServer(options.tls, handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function serve(res: ServerResponse, replay: Replay): Promise<void> {
  res.socket?.setNoDelay(true)
  const headers: Record<string, string> = {}
  const contentType = replay.contentType === undefined ? 'text/event-stream' : replay.contentType
  if (contentType !== null) headers['content-type'] = contentType
  res.writeHead(replay.status ?? 200, headers)
  const step = replay.chunkBytes ?? replay.body.length
  for (let offset = 0; offset < replay.body.length; offset += step) {
    if (res.destroyed) return
    res.write(replay.body.subarray(offset, offset + step))
    if (replay.gapMs !== undefined) await new Promise((resolve) => setTimeout(resolve, replay.gapMs))
  }
  res.end()
}
