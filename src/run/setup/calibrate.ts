import type { Endpoint } from '../../client/target.js'
import type { RequestRecord } from '../../records/types.js'
import type { Calibration } from '../../result/run-meta.js'
import type { ExactPromptSource } from '../../workload/exact-prompts.js'
import { buildBody } from '../../workload/request-body.js'
import { probeBody, sendOnce } from './preflight.js'

/**
 * Prompt-length calibration against the server. A chat template wraps every prompt in role markers
 * and special tokens, and the server's tokenizer may not be ours, so a prompt of N local tokens is
 * seldom N tokens to the server. Two probes of known local length, each answered with
 * usage.prompt_tokens, give the line server = slope × local + offset; prompts are then sized so the
 * server sees the requested length, and a third probe checks it.
 */
export type CalibrationOutcome =
  | { ok: true; calibration: Calibration; records: RequestRecord[] }
  | { ok: false; reason: string; records: RequestRecord[] }

const SHORT_PROBE = 16
const LONG_PROBE = 256
/** Probes need no output: one token keeps them cheap and fast. */
const PROBE_OUTPUT_TOKENS = 1

/** Local tokens to send for `serverTokens` server-counted ones (at least 1). */
export function localLength(calibration: Calibration | null, serverTokens: number): number {
  if (calibration === null || serverTokens <= 0) return serverTokens
  return Math.max(1, Math.round((serverTokens - calibration.offset) / calibration.slope))
}

export async function calibrate(
  endpoint: Endpoint,
  prompts: ExactPromptSource,
  target: number,
  /** The tokenizer's name, for the summary when the server's differs. */
  tokenizer: string,
  /** A stop: the probe in flight is cut and no further probe is sent. */
  interrupt?: AbortSignal,
): Promise<CalibrationOutcome> {
  const records: RequestRecord[] = []
  const probe = async (local: number, id: number): Promise<number | null> => {
    if (interrupt?.aborted === true) return null
    const body = buildBody(probeBody(endpoint), prompts.prompt(id, local), PROBE_OUTPUT_TOKENS)
    const record = await sendOnce(endpoint, body, 'calibration', undefined, interrupt)
    records.push(record)
    return record.error === null ? record.input_tokens : null
  }
  // Ids far from the run's own prompts, so the probes warm no prefix cache the run then hits.
  const longLocal = Math.max(LONG_PROBE, Math.min(target, 2048))
  const short = await probe(SHORT_PROBE, 1_000_001)
  const long = await probe(longLocal, 1_000_002)
  if (interrupt?.aborted === true) return { ok: false, reason: 'interrupted', records }
  if (short === null || long === null) {
    return {
      ok: false,
      reason:
        "the server sent no usage.prompt_tokens (or a probe failed): prompt lengths are our tokenizer's count",
      records,
    }
  }
  const slope = (long - short) / (longLocal - SHORT_PROBE)
  const offset = short - slope * SHORT_PROBE
  if (!(slope > 0.25 && slope < 4)) {
    return {
      ok: false,
      reason: `the server counted ${short} and ${long} tokens for ${SHORT_PROBE}- and ${longLocal}-token prompts; that is no tokenizer's line, so prompts are left at our count`,
      records,
    }
  }
  const calibration: Calibration = {
    slope: Math.round(slope * 10000) / 10000,
    offset: Math.round(offset * 100) / 100,
    probes: [
      { local: SHORT_PROBE, server: short },
      { local: longLocal, server: long },
    ],
    check: null,
    summary: '',
  }
  if (target > 0) {
    const server = await probe(localLength(calibration, target), 1_000_003)
    if (server !== null) calibration.check = { requested: target, server }
  }
  // Slope 1: the same tokenizer, and the offset is the chat template. Otherwise the tokenizers differ.
  // Said so a person can follow it (issue 36: "server counts our tokens +28.93 …" was not).
  const overhead = Math.abs(calibration.offset).toFixed(1)
  const extra =
    calibration.offset >= 0.05
      ? `, plus ${overhead} tokens of its own in every prompt (its chat template)`
      : calibration.offset <= -0.05
        ? `, less ${overhead}`
        : ''
  const line =
    Math.abs(calibration.slope - 1) < 0.01
      ? `the server counts a prompt as we do${extra}`
      : `the server's tokenizer counts ${calibration.slope.toFixed(2)} tokens for each of ours (${tokenizer})${extra}`
  calibration.summary =
    `calibration: ${line}; prompts are sized so the server counts the length asked` +
    (calibration.check === null
      ? ''
      : ` (checked: a prompt meant to be ${target} tokens, the server counted ${calibration.check.server})`)
  return { ok: true, calibration, records }
}
