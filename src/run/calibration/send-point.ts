import { performance } from 'node:perf_hooks'
import { sendRequest } from '../../client/stream-client.js'
import { bodyOptionsOf, closeTarget, type Endpoint, openTarget } from '../../client/target.js'
import type { CalibrationPoint } from '../../model/calibration-design.js'
import type { RequestRecord } from '../../records/types.js'
import type { Calibration } from '../../result/run-meta.js'
import { staggeredStarts, staggerSpreadMs } from '../../schedule/stagger.js'
import type { ExactPromptSource } from '../../workload/exact-prompts.js'
import { buildBody } from '../../workload/request-body.js'
import { completeTokenCounts } from '../../workload/token-counts.js'
import { localLength } from '../setup/calibrate.js'

/**
 * One calibration point sent: a closed loop of `concurrency` streams, each sending its next request
 * as its last ends, until `requests` were sent; every request with ignore_eos so it decodes its whole
 * max_tokens, its prompt sized so the server counts `inputTokens` (the prompt-length calibration) and
 * distinct from every other (`firstId` on), so no prefix cache serves it. Streams start staggered as
 * a run's do. At `deadlineMs` (performance.now()) requests in flight are cut and no more are sent:
 * the calibration's budget is a bound, not a wish.
 */
export async function sendPoint(
  endpoint: Endpoint,
  prompts: ExactPromptSource,
  calibration: Calibration | null,
  point: CalibrationPoint,
  firstId: number,
  deadlineMs: number,
): Promise<{ records: RequestRecord[]; cut: boolean }> {
  const stop = new AbortController()
  const timer = setTimeout(
    () => stop.abort(new Error('calibration budget spent')),
    Math.max(0, deadlineMs - performance.now()),
  )
  const target = { ...openTarget(endpoint, point.concurrency), interrupt: stop.signal }
  const options = { ...bodyOptionsOf(endpoint), ignoreEos: true }
  const local = localLength(calibration, point.inputTokens)
  const records: RequestRecord[] = []
  let sent = 0
  const stream = async (worker: number): Promise<void> => {
    while (sent < point.requests && !stop.signal.aborted) {
      const seq = sent++
      const body = buildBody(options, prompts.prompt(firstId + seq, local), point.outputTokens)
      const record = await sendRequest(target, {
        seq,
        worker,
        level: point.concurrency,
        phase: 'measure',
        prompt_id: firstId + seq,
        scheduled_at: null,
        attempt: 1,
        body,
      })
      records.push(completeTokenCounts(record))
    }
  }
  try {
    const spread = staggerSpreadMs(
      (point.estimatedS * 1000) / Math.max(1, Math.ceil(point.requests / point.concurrency)),
      null,
    )
    const starts = staggeredStarts(Math.min(point.concurrency, point.requests), spread, firstId)
    await Promise.all(
      [...starts].map(
        (at, worker) =>
          new Promise<void>((resolve, reject) => {
            setTimeout(() => stream(worker).then(resolve, reject), at)
          }),
      ),
    )
    return { records, cut: stop.signal.aborted }
  } finally {
    clearTimeout(timer)
    await closeTarget(target)
  }
}
