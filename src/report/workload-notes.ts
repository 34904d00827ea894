import type { EmbeddingFigures } from '../metrics/embedding-figures.js'
import { STOPPED_EARLY_FLAG_SHARE } from '../metrics/workload-figures.js'
import type { BenchResult } from '../result/bench-result.js'
import { levelName } from '../result/level-name.js'
import type { RunMeta } from '../result/run-meta.js'
import { traceNotes } from './trace-notes.js'

/** Axis and column title of the level values. */
/** The lengths as planned: "256", or "normal(300, 50), mean 302" when drawn from a distribution. */
export function lengthsLine(meta: RunMeta): string {
  const { workload } = meta
  const one = (spec: string | undefined, mean: number): string =>
    spec === undefined || spec === String(mean) ? String(mean) : `${spec}, mean ${mean}`
  return `input ${one(workload.input, workload.input_tokens)} / output ${one(workload.output, workload.output_tokens)} tokens`
}

export function levelAxisTitle(meta: RunMeta): string {
  if (meta.trace != null) return 'trace replay speed (x)'
  return meta.load?.mode === 'request_rate' ? 'request rate (req/s)' : 'concurrency'
}

export function levelHeading(meta: RunMeta): string {
  if (meta.trace != null) return 'speed'
  return meta.load?.mode === 'request_rate' ? 'rate/s' : 'conc.'
}

/**
 * The workload's own lines under a result: calibration, requested vs counted input, outputs that
 * stopped early, a schedule the client could not keep (request-rate mode), and cost. Shared by the
 * terminal, summary.md and report.html so they say the same thing.
 */
/** An embeddings level's throughput, and why the generation columns are empty. */
function embeddingsNote(name: string, figures: EmbeddingFigures): string {
  const tokens =
    figures.input_tokens_per_s === null
      ? 'no usage.prompt_tokens'
      : `${figures.input_tokens_per_s} input tokens/s`
  return `${name}: embeddings ${figures.inputs_per_s} inputs/s, ${tokens}; latency is E2E (TTFT, TPOT, ITL and output tok/s do not apply)`
}

export function workloadNotes(result: BenchResult): string[] {
  const { meta } = result
  const lines: string[] = [...traceNotes(result)]
  const calibration = meta.workload.calibration
  if (calibration != null) {
    lines.push('slope' in calibration ? calibration.summary : `calibration skipped: ${calibration.skipped}`)
  }
  for (const level of result.levels) {
    const name = levelName(meta, level.value)
    const { input, output, schedule } = level
    if (input?.requested_mean != null && input.server_mean != null) {
      const off = (100 * (input.server_mean - input.requested_mean)) / Math.max(1, input.requested_mean)
      if (Math.abs(off) >= 2)
        lines.push(
          `${name}: input tokens requested ${input.requested_mean}, server counted ${input.server_mean} (${off > 0 ? '+' : ''}${off.toFixed(1)}%)`,
        )
    }
    if (level.embeddings !== undefined) lines.push(embeddingsNote(name, level.embeddings))
    else if (output !== undefined && output.stopped_early_share > STOPPED_EARLY_FLAG_SHARE) {
      lines.push(
        `${name}: ${output.stopped_early} of ${output.tokens.count} requests stopped before max_tokens ` +
          `(mean output ${output.tokens.mean?.toFixed(1)} of ${output.requested_mean?.toFixed(1)} asked): TPOT and throughput describe shorter outputs than planned; ` +
          'send --ignore-eos if the server accepts it (vLLM, SGLang, TGI)',
      )
    }
    if (schedule?.fell_behind) {
      const intended = level.ttft_ms_from_intended
      const p99 = intended?.p99 ?? intended?.max ?? null
      lines.push(
        `${name}: FELL BEHIND its schedule: ${schedule.reason}` +
          (p99 === null
            ? ''
            : ` (TTFT p99 from intended time ${p99.toFixed(0)} ms vs ${level.ttft_ms.p99?.toFixed(0) ?? '-'} ms from send)`),
      )
    }
  }
  const cost = result.cost
  if (cost !== null && cost !== undefined) {
    const parts = [`measured levels ${cost.measured.toFixed(4)} ${cost.currency}`]
    if (cost.total !== null) parts.push(`all requests sent ${cost.total.toFixed(4)}`)
    if (cost.estimated !== null) parts.push(`estimated before the run ${cost.estimated.toFixed(4)}`)
    lines.push(`Cost: ${parts.join(', ')}`)
  }
  return lines
}
