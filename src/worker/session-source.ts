import type { SessionSource } from '../schedule/session-loop.js'
import type { BodyOptions } from '../workload/request-body.js'
import { SessionConversation } from '../workload/session-body.js'
import type { SessionWork } from './protocol.js'

/**
 * A thread's sessions: the n-th one it runs is spec n mod specs, under the run-wide session number n
 * (dealt like prompt ids, so distinct across threads and shards), which makes `id#n` unique in the
 * run even when the specs repeat.
 */
export function threadSessions(
  work: SessionWork,
  body: BodyOptions,
  nextNumber: () => number,
): SessionSource {
  return {
    thinkMs: work.thinkMs,
    next: () => {
      const n = nextNumber()
      const spec = work.specs[n % work.specs.length] as SessionWork['specs'][number]
      return { id: `${spec.id}#${n}`, promptId: n, conversation: new SessionConversation(spec, body) }
    },
  }
}
