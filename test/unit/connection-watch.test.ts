import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import {
  answered,
  ConnectionWatch,
  claimSocket,
  diedUnanswered,
  PROMPT_CLOSE_MS,
  releaseSocket,
} from '../../src/client/connections.js'

/** A stand-in for a socket: the watch only listens for its 'end' (the server's FIN). */
function fakeSocket(): Socket {
  return new EventEmitter() as unknown as Socket
}

/** One whole request/response on `socket`, ending at `endAt`; returns the socket's state. */
function served(watch: ConnectionWatch, socket: Socket, endAt: number) {
  const state = watch.track(socket, false)
  claimSocket(state, endAt - 10)
  answered(state, false)
  releaseSocket(state, endAt, true)
  return state
}

test('the race is one close: the FIN and the request that died on it are counted once', () => {
  const watch = new ConnectionWatch(true)
  const socket = fakeSocket()
  const now = performance.now()
  const state = served(watch, socket, now)
  assert.equal(claimSocket(state, now + 1), true, 'the next request reuses the socket')
  diedUnanswered(state)
  socket.emit('end')
  assert.deepEqual(watch.take(), { closed_by_server: 1, keepalive: false })
})

test('a close long after the last response is an idle timeout: keep-alive stays on', () => {
  const watch = new ConnectionWatch(true)
  const socket = fakeSocket()
  const longAgo = performance.now() - 10 * PROMPT_CLOSE_MS
  const state = served(watch, socket, longAgo)
  claimSocket(state, longAgo + 5 * PROMPT_CLOSE_MS)
  diedUnanswered(state)
  socket.emit('end')
  assert.deepEqual(watch.take(), { closed_by_server: 0, keepalive: true })
})

test('an idle connection closed right after its response is a close after a response', () => {
  const watch = new ConnectionWatch(true)
  const socket = fakeSocket()
  served(watch, socket, performance.now())
  socket.emit('end')
  assert.deepEqual(watch.take(), { closed_by_server: 1, keepalive: false })
})

test('a response dropped midway, or a close the server announced, is not a close after a response', () => {
  const watch = new ConnectionWatch(true)
  const dropped = fakeSocket()
  const state = served(watch, dropped, performance.now())
  claimSocket(state, performance.now())
  answered(state, false)
  dropped.emit('end')
  const announced = fakeSocket()
  const closing = watch.track(announced, false)
  claimSocket(closing, performance.now())
  answered(closing, true)
  releaseSocket(closing, performance.now(), true)
  announced.emit('end')
  assert.deepEqual(watch.take(), { closed_by_server: 0, keepalive: true })
})
