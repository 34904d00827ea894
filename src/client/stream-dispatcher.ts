import type { Dispatcher } from 'undici'

/**
 * What the streaming client needs of whatever sends its requests: undici's dispatch and destroy.
 * Both undici's Pool/Client and the h1 client's pool (client/h1/pool.ts) satisfy it, so tests and
 * callers may hand either to a Target.
 */
export interface StreamDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean
  destroy(): Promise<void>
  /**
   * A dispatcher of one new connection with the same settings, for a resend that must not meet a
   * stale socket. Absent (undici): the caller opens an undici Client.
   */
  oneOff?(): StreamDispatcher
}

/**
 * A DispatchController that knows when the read being handed on arrived (the h1 client's
 * connection stamps it first thing in its read callback). undici's has no such field.
 */
export interface ReadStamped {
  readAt?: number
}
