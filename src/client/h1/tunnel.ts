import { isIP, type Socket } from 'node:net'
import type { ProxyRoute } from '../proxy.js'
import { ProxyRefusedError } from './errors.js'

/**
 * The CONNECT of an https request through a proxy: on `socket`, connected to the proxy, asks for a
 * tunnel to host:port and reads the proxy's answer head. `done(null)` once the proxy said 2xx (the
 * socket then carries the TLS handshake with the server), or with a ProxyRefusedError naming the
 * proxy and its status. The answer head is small; one larger than 16 KiB is not a proxy's answer.
 */

const MAX_ANSWER_HEAD_BYTES = 16 * 1024

export function requestTunnel(
  socket: Socket,
  target: { host: string; port: number },
  proxy: ProxyRoute,
  done: (error: Error | null) => void,
): void {
  const authority = `${isIP(target.host) === 6 ? `[${target.host}]` : target.host}:${target.port}`
  const auth = proxy.authorization === null ? '' : `proxy-authorization: ${proxy.authorization}\r\n`
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${auth}\r\n`, 'latin1')
  let head = Buffer.alloc(0)
  const refuse = (status: number | null, answer: string): void =>
    done(new ProxyRefusedError(proxy.origin, authority, status, answer))
  const onData = (read: Buffer): void => {
    head = Buffer.concat([head, read])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0) {
      if (head.length <= MAX_ANSWER_HEAD_BYTES) return
      socket.removeListener('data', onData)
      refuse(null, `an answer head over ${MAX_ANSWER_HEAD_BYTES / 1024} KiB`)
      return
    }
    socket.removeListener('data', onData)
    // Printable only: the line is stored and shown.
    const statusLine = head
      .subarray(0, head.indexOf('\r\n'))
      .toString('latin1')
      .replace(/[^\x20-\x7e]/g, '?')
    const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine)
    if (status === null) refuse(null, 'not an HTTP answer')
    else if (!status[1]?.startsWith('2'))
      refuse(Number(status[1]), `HTTP ${status[1]} ${status[2] ?? ''}`.trim())
    // The server speaks only after our TLS ClientHello: bytes already here came from the proxy.
    else if (head.length > end + 4)
      refuse(Number(status[1]), 'bytes after its answer, before the TLS handshake')
    else done(null)
  }
  socket.on('data', onData)
}
