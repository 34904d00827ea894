import { describeValue } from '../../src/describe-value.js'

/**
 * Polls `condition` until it holds: tests wait for the state they need (requests in flight, records on
 * disk), never for a fixed window that a busy machine may not honour. Bounded: throws after `limitMs`;
 * polls every `everyMs`.
 */
export async function waitUntil(
  condition: () => boolean,
  what: string,
  limitMs = 30_000,
  everyMs = 50,
): Promise<void> {
  await poll(
    condition,
    (held) => held,
    () => what,
    limitMs,
    everyMs,
  )
}

type Read<T> = { value: T } | { failure: unknown }

/**
 * Polls `read` until `accept` takes what it returned, and returns that value (a gauge that has risen,
 * a server that answers 200). A read that fails (a server not listening yet) counts as not yet. Bounded
 * as waitUntil is; the error names the last value read, or the last failure.
 */
export async function waitForValue<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  limitMs = 30_000,
  everyMs = 50,
): Promise<T> {
  const attempt = (): Promise<Read<T>> =>
    read().then(
      (value) => ({ value }),
      (failure: unknown) => ({ failure }),
    )
  const last = (done: Read<T>) =>
    'value' in done ? describeValue(done.value) : `a failure: ${String(done.failure)}`
  const done = await poll(
    attempt,
    (done) => 'value' in done && accept(done.value),
    (done) => `${what} (last: ${last(done)})`,
    limitMs,
    everyMs,
  )
  return (done as { value: T }).value
}

async function poll<T>(
  read: () => T | Promise<T>,
  accept: (value: T) => boolean,
  describe: (last: T) => string,
  limitMs: number,
  everyMs: number,
): Promise<T> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const value = await read()
    if (accept(value)) return value
    if (Date.now() > deadline) throw new Error(`gave up after ${limitMs} ms waiting for ${describe(value)}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
