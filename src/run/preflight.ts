import { performance } from 'node:perf_hooks'
import { sendRequest } from '../client/stream-client.js'
import type { RunConfig } from '../config/types.js'
import { completeTokenCounts } from '../records/token-counts.js'
import type { RequestRecord } from '../records/types.js'
import { buildBody } from '../workload/request-body.js'
import { closeTarget, openTarget, targetSpec } from './target.js'

export interface PreflightResult {
  ok: boolean
  record: RequestRecord
  /** One line for the terminal: what failed and the server's own answer. */
  summary: string
}

/**
 * One tiny request before the first level, with the run's own settings (endpoint, stream, key):
 * a wrong key, model name or URL fails here in seconds, not after a whole level of errors.
 */
export async function runPreflight(config: RunConfig, apiKey: string | null): Promise<PreflightResult> {
  const target = openTarget(targetSpec(config, apiKey), 1)
  try {
    const body = buildBody(
      {
        model: config.target.model,
        endpoint: config.target.endpoint,
        stream: config.client.stream,
        maxTokens: 4,
      },
      'Say hello.',
    )
    const record = completeTokenCounts(
      await sendRequest(target, {
        seq: -1,
        worker: 0,
        level: 0,
        phase: 'preflight',
        prompt_id: -1,
        scheduled_at: null,
        attempt: 1,
        body,
      }),
    )
    return { ok: record.error === null, record, summary: describe(record) }
  } finally {
    await closeTarget(target)
  }
}

function describe(record: RequestRecord): string {
  if (record.error === null) {
    const ttft =
      record.first_token_at === null ? 'n/a' : `${(record.first_token_at - record.sent_at).toFixed(0)} ms`
    return `preflight ok: HTTP ${record.status}, TTFT ${ttft}, ${record.output_tokens} tokens (${record.token_source})`
  }
  const status = record.status === null ? '' : ` (HTTP ${record.status})`
  return `preflight failed${status}: ${record.error.class}: ${record.error.message}`
}
