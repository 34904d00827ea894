import { sendRequest } from '../../client/stream-client.js'
import { bodyOptionsOf, closeTarget, type Endpoint, openTarget } from '../../client/target.js'
import { e2eMs, tpotMs, ttftMs } from '../../metrics/derive.js'
import { reasoningPhrase } from '../../metrics/reasoning-figures.js'
import { protocolOf } from '../../protocols/wire-protocol.js'
import type { RequestRecord } from '../../records/types.js'
import { type BodyOptions, buildBody } from '../../workload/request-body.js'
import { completeTokenCounts } from '../../workload/token-counts.js'
import { type Diagnosis, diagnose } from '../level/diagnose.js'
import { PROBE_CLOSE_WAIT_MS, probeWatchFor } from './connection-policy.js'
import { fetchModels } from './models.js'

export interface PreflightResult {
  ok: boolean
  record: RequestRecord
  diagnosis: Diagnosis | null
  /** One line (two when it failed) for the terminal: what happened and what to do. */
  summary: string
}

/**
 * One small streamed request with the run's own settings (endpoint, stream, key): a wrong key,
 * model name or URL fails here in seconds, not after a whole level of errors. `llmbench check`
 * is the same request with more tokens, printed as they arrive.
 */
export async function runPreflight(
  endpoint: Endpoint,
  options: {
    maxTokens?: number
    onText?: (text: string) => void
    label?: string
    /** Cuts the request at once (a stop during the preflight). */
    interrupt?: AbortSignal
  } = {},
): Promise<PreflightResult> {
  const label = options.label ?? 'preflight'
  const body = buildBody(probeBody(endpoint), 'Say hello.', options.maxTokens ?? 4)
  const record = await sendOnce(endpoint, body, 'preflight', options.onText, options.interrupt)
  if (record.error === null && !protocolOf(endpoint.protocol).generatesTokens) {
    // Nothing streams and nothing is generated: the latency and the tokens embedded are the figures.
    return {
      ok: true,
      record,
      diagnosis: null,
      summary:
        `${label} ok: HTTP ${record.status}, latency ${e2eMs(record).toFixed(0)} ms, ` +
        `${record.input_tokens === null ? 'input tokens not reported' : `${record.input_tokens} input tokens`} (embeddings: no TTFT or TPOT)`,
    }
  }
  if (record.error === null) {
    const ttft = ttftMs(record)
    const tpot = tpotMs(record)
    return {
      ok: true,
      record,
      diagnosis: null,
      summary:
        `${label} ok: HTTP ${record.status}, TTFT ${ttft === null ? 'n/a' : `${ttft.toFixed(0)} ms`}, ` +
        `TPOT ${tpot === null ? 'n/a' : `${tpot.toFixed(1)} ms`}, ${record.output_tokens} output tokens (${record.token_source}` +
        `${record.input_tokens === null ? '' : `, ${record.input_tokens} prompt tokens`})${reasoningPhrase(record)}`,
    }
  }
  // An unknown model is easier to fix with the list of served ones.
  let models: string[] | null = null
  if (record.status === 404 && options.interrupt?.aborted !== true) {
    const listed = await fetchModels(endpoint)
    models = 'ids' in listed ? listed.ids : null
  }
  const diagnosis = diagnose(
    record,
    endpoint.body.model,
    endpoint.apiKeyEnv,
    models,
    protocolOf(endpoint.protocol).format,
  ) as Diagnosis
  return {
    ok: false,
    record,
    diagnosis,
    summary: `${label} failed: ${diagnosis.problem}\n  ${diagnosis.hint}`,
  }
}

/**
 * The run's features (--tools, --response-schema, --images, --audio) asked of the server once before
 * the load, in a body the run will send: a server that refuses one answers every request of the run
 * the same way, and llama.cpp's "Cannot use tools with stream" (HTTP 500) was judged "client-bound"
 * and "overloaded" (issue 36). The base preflight has answered by then, so a refusal here is the
 * feature's, quoted in the server's words.
 */
export async function runFeaturePreflight(
  endpoint: Endpoint,
  body: Buffer,
  features: readonly string[],
  interrupt?: AbortSignal,
): Promise<PreflightResult> {
  const record = await sendOnce(endpoint, body, 'preflight', undefined, interrupt)
  const named = features.join(' and ')
  if (record.error === null)
    return { ok: true, record, diagnosis: null, summary: `preflight of ${named} ok: HTTP ${record.status}` }
  const diagnosis = {
    problem: `the server refused a request with ${named}: ${record.error.message}`,
    hint:
      `every request of the run would fail the same way: drop ${named}, or use a server (or a server setting) ` +
      'that supports it',
  }
  return {
    ok: false,
    record,
    diagnosis,
    summary: `preflight failed: ${diagnosis.problem}\n  ${diagnosis.hint}`,
  }
}

/**
 * One request outside the load (preflight, calibration), on its own connection, counted on this
 * thread. After a good response it waits a moment for the server to close the connection: a
 * server that does (llama.cpp) is known before the load starts, whose threads then never reuse one.
 */
export async function sendOnce(
  endpoint: Endpoint,
  body: Buffer,
  phase: RequestRecord['phase'],
  onText?: (text: string) => void,
  interrupt?: AbortSignal,
): Promise<RequestRecord> {
  const watch = probeWatchFor(endpoint)
  const target = { ...openTarget(endpoint, 1, watch), onText, interrupt }
  try {
    const record = completeTokenCounts(
      await sendRequest(target, {
        seq: -1,
        worker: 0,
        level: 0,
        phase,
        prompt_id: -1,
        scheduled_at: null,
        attempt: 1,
        body,
      }),
    )
    if (record.error === null && record.connection !== undefined)
      await watch.closeSeenWithin(PROBE_CLOSE_WAIT_MS)
    return record
  } finally {
    await closeTarget(target)
  }
}

/** A probe's body: the run's model, endpoint, protocol and stream, without ignore_eos (a probe wants a few tokens, not a forced length). */
export function probeBody(endpoint: Endpoint): BodyOptions {
  return { ...bodyOptionsOf(endpoint), ignoreEos: false }
}
