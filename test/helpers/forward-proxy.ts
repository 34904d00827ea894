import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'

/** One request the proxy took: a forwarded one (`GET http://host:port/path`) or a tunnel (`CONNECT host:port`). */
export interface ProxiedRequest {
  method: string
  /** The absolute-form URL, or CONNECT's host:port. */
  target: string
  /** Its Proxy-Authorization header, if any. */
  authorization: string | undefined
}

export interface ForwardProxy {
  /** http://127.0.0.1:PORT */
  url: string
  /** Every request it took, refused ones included, in order. */
  seen: ProxiedRequest[]
  close(): Promise<void>
}

export interface ForwardProxyOptions {
  /** The Proxy-Authorization value required of every request; anything else gets 407. */
  requireAuthorization?: string
  /** Answer every CONNECT with this status (a proxy whose policy forbids the tunnel). */
  refuseConnect?: number
}

/**
 * A small forward proxy on 127.0.0.1, as an egress proxy behaves: absolute-form requests are sent on
 * to the server named and the answer piped back; CONNECT opens a TCP tunnel to host:port. It can
 * require credentials (407 with Proxy-Authenticate) and records what it was asked.
 */
export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const seen: ProxiedRequest[] = []
  const sockets = new Set<Socket>()
  const allowed = (req: IncomingMessage): boolean =>
    options.requireAuthorization === undefined ||
    req.headers['proxy-authorization'] === options.requireAuthorization
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({
      method: req.method ?? '',
      target: req.url ?? '',
      authorization: req.headers['proxy-authorization'],
    })
    if (!allowed(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"', 'content-type': 'text/plain' })
      res.end('proxy authentication required')
      return
    }
    if (!(req.url ?? '').startsWith('http://')) {
      res.writeHead(400).end('not an absolute-form request')
      return
    }
    const { 'proxy-authorization': _auth, 'proxy-connection': _keep, ...headers } = req.headers
    const upstream = httpRequest(req.url as string, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  }
  const server = createServer(forward)
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({ method: 'CONNECT', target: req.url ?? '', authorization: req.headers['proxy-authorization'] })
    client.on('error', () => {})
    const refusal = !allowed(req) ? 407 : options.refuseConnect
    if (refusal !== undefined) {
      const auth = refusal === 407 ? 'proxy-authenticate: Basic realm="test"\r\n' : ''
      client.end(`HTTP/1.1 ${refusal} Refused\r\n${auth}content-length: 0\r\n\r\n`)
      return
    }
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/)
    const upstream = connect(Number(port), host as string, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
