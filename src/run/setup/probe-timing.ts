import { sendRequest } from '../../client/stream-client.js'
import { closeTarget, type Endpoint, openTarget } from '../../client/target.js'
import { e2eMs, tpotMs, ttftMs } from '../../metrics/derive.js'
import { percentileOfSorted } from '../../metrics/distribution.js'
import type { RequestRecord } from '../../records/types.js'
import type { ExactPromptSource } from '../../workload/exact-prompts.js'
import { buildBody } from '../../workload/request-body.js'
import { completeTokenCounts } from '../../workload/token-counts.js'
import { probeWatchFor } from './connection-policy.js'
import { probeBody } from './preflight.js'

/**
 * The time one request of the run takes, from a few warm probes instead of one cold request: a
 * single first request pays the connection, TLS, and the server's own warm-up (a cold TPOT read
 * 0.4–10.7 ms against a simulator that decodes at 10 ms), and the plan's request count, cost and
 * duration swung 2–6× between identical runs. One warm-up request on the connection, then
 * PROBES timed ones back to back on it; their median is the projection, their spread its range.
 */
export const WARMUP_PROBES = 1
export const TIMED_PROBES = 3
/** Enough tokens for a TPOT of a dozen intervals, few enough to cost nothing. */
export const PROBE_MAX_TOKENS = 16
/**
 * Below this many planned prompt tokens the short probes' TTFT is the run's: no length probe. The
 * short probe's prompt is about 20 tokens with a chat template.
 */
export const LENGTH_PROBE_MIN_TOKENS = 64

/**
 * The TTFT of one probe at the run's planned prompt length, beside the short probes': a 2-minute
 * prefill-heavy run was planned as "about 3 s" from short probes alone. Its prompt must be one the
 * run never sends (a cached prefix would time nothing); one output token, it costs one prefill.
 */
export interface LengthProbe {
  /** The probe's body: the planned length's prompt, max_tokens 1. */
  body: Buffer
  /** Its prompt tokens as planned (the server's count is used when it reports one). */
  tokens: number
}

export interface ProbeTiming {
  /** Timed probes that succeeded. */
  probes: number
  ttft_ms: { median: number; min: number; max: number } | null
  tpot_ms: { median: number; min: number; max: number } | null
  e2e_ms: { median: number; min: number; max: number }
  /**
   * The length probe, when one was sent and answered: its prompt tokens (the server's count when
   * reported), its TTFT, and the prefill rate from it and the short probes (TTFT difference over
   * prompt-token difference; null when the lengths or TTFTs do not give a positive rate).
   */
  at_length?: { input_tokens: number; ttft_ms: number; prefill_ms_per_token: number | null }
}

/**
 * Sends the warm-up and the timed probes on one connection: every record (for the records file) and
 * the timing, null when no timed probe succeeded.
 */
export async function timeProbes(
  endpoint: Endpoint,
  interrupt?: AbortSignal,
  timed = TIMED_PROBES,
  lengthProbe: LengthProbe | null = null,
): Promise<{ records: RequestRecord[]; timing: ProbeTiming | null }> {
  const target = { ...openTarget(endpoint, 1, probeWatchFor(endpoint)), interrupt }
  const body = buildBody(probeBody(endpoint), 'Count from one to twenty.', PROBE_MAX_TOKENS)
  const records: RequestRecord[] = []
  const send = async (probe: Buffer): Promise<RequestRecord> => {
    const record = completeTokenCounts(
      await sendRequest(target, {
        seq: -1,
        worker: 0,
        level: 0,
        phase: 'preflight',
        prompt_id: -1,
        scheduled_at: null,
        attempt: 1,
        body: probe,
      }),
    )
    records.push(record)
    return record
  }
  let long: RequestRecord | null = null
  try {
    for (let k = 0; k < WARMUP_PROBES + timed && interrupt?.aborted !== true; k++) await send(body)
    // Last, on the warm connection: its TTFT is the prefill, not a first request's set-up.
    if (lengthProbe !== null && interrupt?.aborted !== true) long = await send(lengthProbe.body)
  } finally {
    await closeTarget(target)
  }
  const good = records.slice(WARMUP_PROBES, WARMUP_PROBES + timed).filter((record) => record.error === null)
  if (good.length === 0) return { records, timing: null }
  const timing: ProbeTiming = {
    probes: good.length,
    ttft_ms: spread(good.map(ttftMs)),
    tpot_ms: spread(good.map(tpotMs)),
    e2e_ms: spread(good.map(e2eMs)) as NonNullable<ReturnType<typeof spread>>,
  }
  const atLength = long === null || lengthProbe === null ? null : lengthFigures(long, lengthProbe, good)
  if (atLength !== null) timing.at_length = atLength
  return { records, timing }
}

/** Prompt id of the length probe: far from the run's own, like the calibration probes' (calibrate.ts). */
const LENGTH_PROBE_ID = 1_000_004

/** The length probe for prompts of `tokens` (the plan's mean); null when the short probes already are that long. */
export function lengthProbeFor(
  endpoint: Endpoint,
  prompts: ExactPromptSource,
  tokens: number,
): LengthProbe | null {
  const length = Math.round(tokens)
  if (!(length >= LENGTH_PROBE_MIN_TOKENS)) return null
  return { body: buildBody(probeBody(endpoint), prompts.prompt(LENGTH_PROBE_ID, length), 1), tokens: length }
}

/** The length probe's TTFT and the prefill rate it gives against the short probes; null if it failed. */
function lengthFigures(
  long: RequestRecord,
  probe: LengthProbe,
  short: readonly RequestRecord[],
): ProbeTiming['at_length'] | null {
  const ttft = ttftMs(long)
  if (long.error !== null || ttft === null) return null
  const inputTokens = long.input_tokens ?? probe.tokens
  const shortTtft = spread(short.map(ttftMs))?.median ?? null
  const shortTokens = spread(short.map((r) => r.input_tokens))?.median ?? null
  const rate =
    shortTtft === null || shortTokens === null || inputTokens <= shortTokens
      ? null
      : (ttft - shortTtft) / (inputTokens - shortTokens)
  return {
    input_tokens: inputTokens,
    ttft_ms: ttft,
    prefill_ms_per_token: rate !== null && rate > 0 ? rate : null,
  }
}

function spread(values: (number | null)[]): { median: number; min: number; max: number } | null {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b)
  if (known.length === 0) return null
  return {
    median: percentileOfSorted(known, 50) as number,
    min: known[0] as number,
    max: known.at(-1) as number,
  }
}

/**
 * One planned request's seconds (TTFT + TPOT × the rest of the planned output), as the median and
 * the range the probes allow: the fastest probe's figures give the low end, the slowest's the high.
 * With a length probe, the TTFT is its own (the planned prompt's prefill), spread as the short
 * probes' TTFTs are; `prefill_s` is the part of it that grows with the prompt (the prefill rate ×
 * the planned length), which concurrent requests cannot overlap (see levelSeconds).
 */
export function projectedSeconds(
  timing: ProbeTiming,
  outputMean: number,
): { median: number; low: number; high: number; prefill_s?: number } {
  const rest = Math.max(0, outputMean - 1)
  if (timing.ttft_ms === null) {
    const { median, min, max } = timing.e2e_ms
    return { median: median / 1000, low: min / 1000, high: max / 1000 }
  }
  const long = timing.at_length
  const shift = long === undefined ? 0 : long.ttft_ms - timing.ttft_ms.median
  const tpot = timing.tpot_ms ?? { median: 0, min: 0, max: 0 }
  const seconds = {
    median: (timing.ttft_ms.median + shift + tpot.median * rest) / 1000,
    low: (timing.ttft_ms.min + shift + tpot.min * rest) / 1000,
    high: (timing.ttft_ms.max + shift + tpot.max * rest) / 1000,
  }
  const rate = long?.prefill_ms_per_token ?? null
  return rate === null || long === undefined
    ? seconds
    : { ...seconds, prefill_s: (rate * long.input_tokens) / 1000 }
}

/** "TTFT 52 ms (48–61), TPOT 10.1 ms (10.0–10.3) over 3 warm probes" */
export function describeTiming(timing: ProbeTiming): string {
  const part = (name: string, s: ProbeTiming['ttft_ms'], digits: number): string =>
    s === null
      ? ''
      : `${name} ${s.median.toFixed(digits)} ms (${s.min.toFixed(digits)}–${s.max.toFixed(digits)}), `
  const figures =
    timing.ttft_ms === null
      ? part('latency', timing.e2e_ms, 0)
      : `${part('TTFT', timing.ttft_ms, 0)}${part('TPOT', timing.tpot_ms, 1)}`
  const long = timing.at_length
  const atLength =
    long === undefined
      ? ''
      : `; TTFT ${long.ttft_ms.toFixed(0)} ms at the planned ${long.input_tokens}-token prompt` +
        (long.prefill_ms_per_token === null
          ? ''
          : ` (prefill ${long.prefill_ms_per_token.toFixed(3)} ms/token)`)
  return `timing: ${figures}median (range) of ${timing.probes} warm probe${timing.probes === 1 ? '' : 's'} after ${WARMUP_PROBES} warm-up${atLength}`
}

/** A trace's rows' span at speed 1, seconds; null without a trace. */
export function traceSpanSeconds(offsetsMs: Float64Array | null): number | null {
  if (offsetsMs === null || offsetsMs.length === 0) return null
  return (offsetsMs[offsetsMs.length - 1] as number) / 1000
}
