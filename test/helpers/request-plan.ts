import type { RequestPlan } from '../../src/client/stream-client.js'
import type { StreamDispatcher } from '../../src/client/stream-dispatcher.js'
import type { Target } from '../../src/client/target.js'

/** A measured request of level 1 with `body`, for tests that send one request through the client. */
export function measurePlan(body: Buffer = Buffer.from('{}')): RequestPlan {
  return { seq: 0, worker: 0, level: 1, phase: 'measure', prompt_id: 0, scheduled_at: null, attempt: 1, body }
}

/** A streamed chat target on `dispatcher` with generous timeouts, for tests that drive the client directly. */
export function streamTarget(
  dispatcher: StreamDispatcher,
  origin: string,
  extra: Partial<Target> = {},
): Target {
  return {
    dispatcher,
    origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    stream: true,
    timeoutMs: 20_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
    ...extra,
  }
}
