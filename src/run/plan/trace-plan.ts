import type { RunConfig } from '../../config/types.js'
import type { ExactPromptSource } from '../../workload/exact-prompts.js'
import type { BodyOptions } from '../../workload/request-body.js'
import { buildBody } from '../../workload/request-body.js'
import type { Tokenizer } from '../../workload/tokenizers.js'
import { TracePrompts } from '../../workload/trace-prompts.js'
import { loadTraceReplay, type TraceReplay } from '../../workload/trace-replay.js'
import type { WorkloadPlan } from './workload-plan.js'

/** The config's trace window, loaded and cut; null when the run replays no trace. */
export function loadConfiguredTrace(config: RunConfig): TraceReplay | null {
  const { workload } = config
  if (workload.trace === null) return null
  return loadTraceReplay(
    workload.trace,
    {
      start_s: workload.trace_start_s,
      duration_s: workload.trace_duration_s,
      max_requests: workload.trace_max_requests,
    },
    workload.trace_speeds,
  )
}

/**
 * Opens every warm-up prompt of a trace replay. Its first word is none of the trace's (those are
 * lower-case common words, see ExactPromptSource), so a warm-up prompt shares no leading token, and
 * no prefix-cache block, with any measured one: the warm-up warms connections and the server, not the
 * cache the measured rows would then hit. (Warming up with the trace's own prompts made 7 of 8
 * measured requests on llama.cpp prefill 1 token: TTFT 17-57 ms against 1.8 s cold.)
 */
export const WARMUP_MARK = 'Warm-up, not measured:'
/** Prompt ids of the warm-up texts: far from the rows' (ids are row indices or Mooncake hash ids). */
const WARMUP_ID_BASE = 2_000_000_000

/** Distinct warm-up prompts of a trace replay: one per warm-up request of a level (each level reuses them). */
export function traceWarmupPrompts(load: { warmup_requests: number }): number {
  return load.warmup_requests
}

/**
 * One body per replayed row, body i for row i: its prompt of exactly its input length (Mooncake rows
 * block by block, see TracePrompts) and max_tokens = its output length. Built before any clock starts,
 * like every other workload; every prompt is counted, so a tokenizer the blocks do not add up under
 * is said, not hidden. After the rows come `warmups` warm-up bodies (rows.length + k, see
 * WARMUP_MARK): the lengths of rows k, k+1, ... but text that no row's begins with.
 */
export function planTraceWorkload(
  replay: TraceReplay,
  sources: { body: BodyOptions; tokenizer: Tokenizer; prompts: ExactPromptSource },
  warmups = 0,
): WorkloadPlan & { off_length: number } {
  const builder = new TracePrompts(sources.prompts, sources.tokenizer)
  let offLength = 0
  const prompts = replay.rows.map((row, index) => {
    const text = builder.prompt(row, index)
    if (sources.tokenizer.count(text) !== row.input_tokens) offLength++
    return {
      body: buildBody(sources.body, text, row.output_tokens),
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
    }
  })
  // The rows' means, the warm-up's prompts left out.
  const mean = (key: 'input_tokens' | 'output_tokens'): number =>
    Math.round(prompts.reduce((sum, p) => sum + p[key], 0) / prompts.length)
  const means = { input_mean: mean('input_tokens'), output_mean: mean('output_tokens') }
  const { meta } = replay
  const markTokens = sources.tokenizer.count(WARMUP_MARK)
  for (let k = 0; k < warmups && replay.rows.length > 0; k++) {
    const row = replay.rows[k % replay.rows.length] as (typeof replay.rows)[number]
    const rest = sources.prompts.prompt(WARMUP_ID_BASE + k, Math.max(1, row.input_tokens - markTokens))
    prompts.push({
      body: buildBody(sources.body, `${WARMUP_MARK} ${rest}`, row.output_tokens),
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
    })
  }
  return {
    prompts,
    ...(warmups > 0 ? { warmup_prompts: { first: replay.rows.length, count: warmups } } : {}),
    ...means,
    tokenizer: sources.tokenizer.name,
    source: `trace ${meta.file} (${meta.format}, ${meta.rows_used} of ${meta.rows_in_file} rows)`,
    off_length: offLength,
  }
}
