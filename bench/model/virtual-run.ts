import { decodeStepMs, prefillMs, SimEngine, type SimParams, VirtualClock } from '../../src/model/engine.js'
import type { RequestRecord } from '../../src/records/types.js'
import { staggeredStarts, staggerSpreadMs } from '../../src/schedule/stagger.js'
import { makeRecord } from '../../test/helpers/records.js'

/**
 * A closed loop against the simulator's engine in virtual time, as request records: what llmbench
 * would record of a server with known parameters, with no network, no client overhead and no noise.
 * The capacity model's fit is judged on these (bench/model/run.ts, test/unit/model-extrapolation.test.ts):
 * parameters known, so recovering them is checkable.
 */
export interface VirtualLevel {
  concurrency: number
  requests: number
  inputTokens: number | ((i: number) => number)
  outputTokens: number | ((i: number) => number)
  /** Record phase: 'calibration' probes feed the prefill fit; 'measure' the decode fit. */
  phase?: 'calibration' | 'measure'
}

export function virtualRecords(params: SimParams, load: VirtualLevel): RequestRecord[] {
  const clock = new VirtualClock()
  const engine = new SimEngine(params, clock)
  const records: RequestRecord[] = []
  const size = (of: number | ((i: number) => number), i: number) => (typeof of === 'number' ? of : of(i))
  let sent = 0
  const send = (): void => {
    const i = sent++
    const sentAt = clock.now()
    const inputTokens = size(load.inputTokens, i)
    const outputTokens = size(load.outputTokens, i)
    const times: number[] = []
    engine.submit(
      { inputTokens, outputTokens },
      {
        onToken: () => times.push(clock.now()),
        onFinish: (timeline) => {
          records.push(
            record(load, i, sentAt, inputTokens, times, timeline.firstTokenAt - timeline.admittedAt),
          )
          if (sent < load.requests) send()
        },
      },
    )
  }
  // Streams start staggered as llmbench staggers them (src/schedule/stagger.ts): a convoy of requests
  // released together would share their prefills, which llmbench does not send.
  const first = prefillMs(params, size(load.inputTokens, 0))
  const oneRequestMs =
    first + (size(load.outputTokens, 0) - 1) * decodeStepMs(params, 1, size(load.inputTokens, 0))
  const streams = Math.min(load.concurrency, load.requests)
  for (const at of staggeredStarts(streams, staggerSpreadMs(oneRequestMs, null), params.seed))
    clock.after(at, send)
  clock.runAll()
  return records
}

function record(
  load: VirtualLevel,
  i: number,
  sentAt: number,
  inputTokens: number,
  times: number[],
  prefillMs: number,
): RequestRecord {
  return makeRecord({
    seq: i,
    level: load.concurrency,
    phase: load.phase ?? 'measure',
    prompt_id: i,
    sent_at: sentAt,
    input_tokens: inputTokens,
    token_times: times,
    server_timings: {
      prompt_n: inputTokens,
      prompt_ms: prefillMs,
      predicted_n: null,
      predicted_ms: null,
      cache_n: null,
    },
  })
}
