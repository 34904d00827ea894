/**
 * Node's own HTTP/1.1 client (llhttp, with node:http's handling of HEAD, 1xx and keep-alive) as the
 * oracle for the h1 client's parser: a raw node:net server on 127.0.0.1 answers each request with
 * bytes the test gives, and node:http reads them. What node:http made of each response is what the
 * hand-written parser is compared with.
 */
import { Agent, type IncomingMessage, request } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'

/** One request of an exchange and the bytes that answer it. */
export interface ScriptedAnswer {
  /** The request is a HEAD (else a GET). */
  head: boolean
  /** The whole answer, 1xx interim responses included. */
  bytes: Buffer
}

/** What node:http read of one final response. */
export interface NodeResponse {
  status: number
  statusText: string
  /** Header fields in arrival order, names lower-cased, values as node:http gives them. */
  headers: [string, string][]
  body: Buffer
  trailers: [string, string][]
  /** llhttp's should_keep_alive: the connection may carry the next request. */
  keepAlive: boolean
}

/** The responses read in order; `error` is why reading stopped early (llhttp's code), if it did. */
export interface NodeOutcome {
  responses: NodeResponse[]
  error: string | null
}

/** Longest an exchange may take: a response node:http frames longer than it is never ends. */
const EXCHANGE_TIMEOUT_MS = 5_000

export class LlhttpOracle {
  private readonly scripts = new Map<string, ScriptedAnswer[]>()
  private nextId = 0
  private readonly sockets = new Set<Socket>()

  private constructor(
    private readonly server: Server,
    private readonly port: number,
  ) {}

  static async start(): Promise<LlhttpOracle> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const oracle = new LlhttpOracle(
      server,
      typeof address === 'object' && address !== null ? address.port : 0,
    )
    server.on('connection', (socket) => oracle.serve(socket))
    return oracle
  }

  /**
   * Sends one request per answer, each after the previous response ended, over a keep-alive agent
   * of one socket; the server closes the connection after the last answer (ending a close-delimited
   * body). Stops at the first error.
   */
  async exchange(answers: readonly ScriptedAnswer[]): Promise<NodeOutcome> {
    const id = String(this.nextId++)
    this.scripts.set(id, [...answers])
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const responses: NodeResponse[] = []
    try {
      for (const [index, answer] of answers.entries()) {
        const result = await this.send(agent, `/${id}/${index}`, answer.head)
        if (typeof result === 'string') return { responses, error: result }
        responses.push(result)
      }
      return { responses, error: null }
    } finally {
      agent.destroy()
      this.scripts.delete(id)
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** One request; its response, or the error that ended it. */
  private send(agent: Agent, path: string, head: boolean): Promise<NodeResponse | string> {
    return new Promise((resolve) => {
      let settled = false
      const settle = (result: NodeResponse | string): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(result)
      }
      const timer = setTimeout(() => {
        settle('timeout')
        outgoing.destroy()
      }, EXCHANGE_TIMEOUT_MS)
      const outgoing = request({
        host: '127.0.0.1',
        port: this.port,
        path,
        method: head ? 'HEAD' : 'GET',
        agent,
        // As large as the h1 client's own limit (node:http's default is 16 KiB).
        maxHeaderSize: 64 * 1024,
      })
      const failed = (error: Error & { code?: string }): void => settle(error.code ?? error.message)
      outgoing.on('error', failed)
      outgoing.on('response', (response: IncomingMessage) => {
        const body: Buffer[] = []
        response.on('data', (bytes: Buffer) => body.push(bytes))
        response.on('error', failed)
        response.on('aborted', () => settle('aborted'))
        response.on('end', () => {
          if (!response.complete) return settle('incomplete')
          settle({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            headers: fieldPairs(response.rawHeaders),
            body: Buffer.concat(body),
            trailers: fieldPairs(response.rawTrailers),
            keepAlive: outgoing.shouldKeepAlive,
          })
        })
      })
      outgoing.end()
    })
  }

  /** Answers each request (a GET or HEAD head, no body) with the bytes scripted for its path. */
  private serve(socket: Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => {})
    let pending = ''
    socket.on('data', (bytes: Buffer) => {
      pending += bytes.toString('latin1')
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const requestHead = pending.slice(0, end)
        pending = pending.slice(end + 4)
        const [, id = '', index = ''] = /^[A-Z]+ \/(\d+)\/(\d+) /.exec(requestHead) ?? []
        const script = this.scripts.get(id)
        const answer = script?.[Number(index)]
        if (script === undefined || answer === undefined) {
          socket.destroy()
          return
        }
        socket.write(answer.bytes)
        if (Number(index) === script.length - 1) socket.end()
      }
    })
  }
}

/** [name, value, name, value, ...] → pairs with lower-case names. */
function fieldPairs(raw: readonly string[]): [string, string][] {
  const pairs: [string, string][] = []
  for (let index = 0; index + 1 < raw.length; index += 2)
    pairs.push([(raw[index] as string).toLowerCase(), raw[index + 1] as string])
  return pairs
}
