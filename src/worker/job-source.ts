import type { JobSource } from '../schedule/job-loop.js'
import { JobConversation } from '../workload/job-body.js'
import type { BodyOptions } from '../workload/request-body.js'
import type { JobWork } from './protocol.js'

/**
 * A thread's jobs: the n-th one it runs is job n mod jobs, under the run-wide job number n (dealt
 * like prompt ids, so distinct across threads and shards), which makes `id#n` unique in the run even
 * when the jobs repeat. As threadSessions does for sessions.
 */
export function threadJobs(work: JobWork, body: BodyOptions, nextNumber: () => number): JobSource {
  return {
    next: () => {
      const n = nextNumber()
      const spec = work.jobs[n % work.jobs.length] as JobWork['jobs'][number]
      return { id: `${spec.id}#${n}`, promptId: n, conversation: new JobConversation(spec, body) }
    },
  }
}
