import type { RequestPlan } from '../../src/client/stream-client.js'

/** A measured request of level 1 with `body`, for tests that send one request through the client. */
export function measurePlan(body: Buffer = Buffer.from('{}')): RequestPlan {
  return { seq: 0, worker: 0, level: 1, phase: 'measure', prompt_id: 0, scheduled_at: null, attempt: 1, body }
}
