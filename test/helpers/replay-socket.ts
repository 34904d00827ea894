import type { Socket } from 'node:net'
import { Duplex } from 'node:stream'

/**
 * A stand-in for a connection's socket (H1PoolOptions.openSocket) that replays a response as the
 * given reads, each its own 'data' event, once the request has been written: the test decides
 * where the network splits the bytes, which loopback TCP never promises.
 */
export interface ReplaySocketOptions {
  /** Close the connection (the server's FIN) after the last read. */
  end?: boolean
  /** Receives every byte the client wrote. */
  written?: Buffer[]
}

export function replaySocket(reads: readonly Buffer[], options: ReplaySocketOptions = {}): Socket {
  let started = false
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      options.written?.push(Buffer.from(chunk))
      done()
      if (started) return
      started = true
      // After the whole request is written (head and body come in one corked write).
      setImmediate(() => {
        // Pushed one by one from outside _read on a flowing stream: each is its own 'data' event.
        for (const read of reads) if (!socket.destroyed) socket.push(read)
        if (options.end === true && !socket.destroyed) socket.push(null)
      })
    },
  })
  Object.assign(socket, { setNoDelay: () => socket, setKeepAlive: () => socket })
  process.nextTick(() => socket.emit('connect'))
  return socket as unknown as Socket
}

/** Splits `bytes` at the given offsets (sorted, inside the buffer). */
export function splitAt(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const pieces: Buffer[] = []
  let from = 0
  for (const offset of offsets) {
    pieces.push(bytes.subarray(from, offset))
    from = offset
  }
  pieces.push(bytes.subarray(from))
  return pieces
}

/**
 * A socket that answers each request written on it (each write that starts a request line) with
 * the next of `answers`: its reads, or 'close' for the server's FIN before any byte.
 */
export function scriptedSocket(answers: (readonly Buffer[] | 'close')[]): Socket {
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      done()
      if (!chunk.subarray(0, 5).equals(Buffer.from('POST '))) return
      const answer = answers.shift()
      setImmediate(() => {
        if (socket.destroyed || answer === undefined) return
        if (answer === 'close') socket.push(null)
        else for (const read of answer) socket.push(read)
      })
    },
  })
  Object.assign(socket, { setNoDelay: () => socket, setKeepAlive: () => socket })
  process.nextTick(() => socket.emit('connect'))
  return socket as unknown as Socket
}
