import type { RunConfig } from '../config/types.js'
import type { ExactPromptSource } from '../workload/exact-prompts.js'
import type { BodyOptions } from '../workload/request-body.js'
import { buildBody } from '../workload/request-body.js'
import type { Tokenizer } from '../workload/tokenizers.js'
import { TracePrompts } from '../workload/trace-prompts.js'
import { loadTraceReplay, type TraceReplay } from '../workload/trace-replay.js'
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
 * One body per replayed row, body i for row i: its prompt of exactly its input length (Mooncake rows
 * block by block, see TracePrompts) and max_tokens = its output length. Built before any clock starts,
 * like every other workload; every prompt is counted, so a tokenizer the blocks do not add up under
 * is said, not hidden.
 */
export function planTraceWorkload(
  replay: TraceReplay,
  sources: { body: BodyOptions; tokenizer: Tokenizer; prompts: ExactPromptSource },
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
  const mean = (key: 'input_tokens' | 'output_tokens'): number =>
    Math.round(prompts.reduce((sum, p) => sum + p[key], 0) / prompts.length)
  const { meta } = replay
  return {
    prompts,
    input_mean: mean('input_tokens'),
    output_mean: mean('output_tokens'),
    tokenizer: sources.tokenizer.name,
    source: `trace ${meta.file} (${meta.format}, ${meta.rows_used} of ${meta.rows_in_file} rows)`,
    off_length: offLength,
  }
}
