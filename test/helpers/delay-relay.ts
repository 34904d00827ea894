import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP relay that adds `oneWayMs` to every byte in each direction, as a network between the client
 * and a remote endpoint would (a nearby region: 20 ms each way, 40 ms round trip). The handshake with
 * the relay itself is local, so only the data's round trip is delayed. Bound to 127.0.0.1 on a free port.
 */
export interface DelayRelay {
  port: number
  close(): Promise<void>
}

export async function startDelayRelay(targetPort: number, oneWayMs: number): Promise<DelayRelay> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      // No Nagle: a small write held for an ACK would add the loopback's delayed-ACK time to the relay's.
      socket.setNoDelay(true)
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    // Timers of one delay fire in the order they were set: bytes keep their order, and an end its place after them.
    const pipeDelayed = (from: Socket, to: Socket): void => {
      from.on('data', (bytes) => setTimeout(() => to.writable && to.write(bytes), oneWayMs))
      from.on('end', () => setTimeout(() => to.end(), oneWayMs))
    }
    pipeDelayed(client, upstream)
    pipeDelayed(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the relay has no port')
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
