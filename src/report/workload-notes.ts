import type { EmbeddingFigures } from '../metrics/embedding-figures.js'
import { levelName } from '../metrics/level-name.js'
import type { LevelSummary } from '../metrics/summarize.js'
import { STOPPED_EARLY_FLAG_SHARE } from '../metrics/workload-figures.js'
import type { BenchResult } from '../result/bench-result.js'
import type { RunMeta } from '../result/run-meta.js'
import { cancelNotes } from './cancel-notes.js'
import { rampNotes } from './ramp-notes.js'
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

export function workloadNotes(result: BenchResult, options: { calibrationSaid?: boolean } = {}): string[] {
  const { meta } = result
  const lines: string[] = [...traceNotes(result)]
  const calibration = meta.workload.calibration
  if (calibration != null && options.calibrationSaid !== true) {
    lines.push('slope' in calibration ? calibration.summary : `calibration skipped: ${calibration.skipped}`)
  }
  for (const level of result.levels) {
    const name = levelName(meta, level.value)
    const { input, output } = level
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
    const lateness = latenessNote(level)
    if (lateness !== null) lines.push(`${name}: ${lateness}`)
  }
  lines.push(...rampNotes(result), ...cancelNotes(result))
  const cost = result.cost
  if (cost !== null && cost !== undefined) {
    const parts = [`measured levels ${cost.measured.toFixed(4)} ${cost.currency}`]
    if (cost.total !== null) parts.push(`all requests sent ${cost.total.toFixed(4)}`)
    if (cost.estimated !== null) parts.push(`estimated before the run ${cost.estimated.toFixed(4)}`)
    lines.push(`Cost: ${parts.join(', ')}`)
  }
  return lines
}

/** Lateness below this share of TTFT p50 changes no figure worth a warning: a note, not an alarm. */
const MINOR_LATENESS_SHARE = 0.1
/** A connect wait this long is a dropped SYN retried after 1 s: the server's accept backlog was full. */
const SYN_RETRY_MS = 900

/**
 * How late a request-rate level's sends were, where the wait was, and whether it matters, in
 * proportion to TTFT: "sends were up to 28 ms late (p95, 1% of TTFT p50 2400 ms): no effect on the
 * figures". A send late for its connection is the server's accept queue (or the network), and is
 * said so rather than blamed on the client's schedule. Null when nothing was late (or not request-rate).
 */
export function latenessNote(
  level: Pick<LevelSummary, 'schedule' | 'ttft_ms' | 'ttft_ms_from_intended'>,
): string | null {
  const { schedule } = level
  if (schedule == null) return null
  const connecting = schedule.late_connecting ?? 0
  if (!schedule.fell_behind && connecting === 0) return null
  const p95 = schedule.lateness_p95_ms ?? schedule.lateness_p99_ms ?? 0
  const ttft = level.ttft_ms.p50
  const share = ttft == null || ttft <= 0 ? null : p95 / ttft
  const proportion =
    share === null
      ? ''
      : `, ${share < 0.01 ? 'under 1' : Math.round(100 * share)}% of TTFT p50 ${ttft?.toFixed(0)} ms`
  const where =
    connecting === 0
      ? ''
      : `; ${connectingClause(connecting, schedule.late, schedule.connection_wait_ms_max ?? null)}`
  if (schedule.dropped === 0 && share !== null && share < MINOR_LATENESS_SHARE)
    return `sends were up to ${p95.toFixed(0)} ms late (p95${proportion}): no effect on the figures${where}`
  const intended = level.ttft_ms_from_intended
  const p99 = intended?.p99 ?? intended?.max ?? null
  const effect =
    p99 === null
      ? ''
      : ` (TTFT p99 from the intended time ${p99.toFixed(0)} ms vs ${level.ttft_ms.p99?.toFixed(0) ?? '-'} ms from the send)`
  if (schedule.fell_behind)
    return `the client fell behind its schedule (lateness p95 ${p95.toFixed(0)} ms${proportion}): ${schedule.reason}${effect}${where}`
  return `sends were late (p95 ${p95.toFixed(0)} ms${proportion})${where}; latency from the intended time includes the wait${effect}`
}

/** The sends late for their connection, and what such a wait is. */
function connectingClause(connecting: number, late: number, connectMax: number | null): string {
  const longest = connectMax === null ? '' : `, up to ${connectMax.toFixed(0)} ms`
  const cause =
    connectMax !== null && connectMax >= SYN_RETRY_MS
      ? "the server's accept queue was full (a dropped connection attempt is retried after 1 s)"
      : 'TCP/TLS set-up: the network or the server accepting connections slowly'
  return `${connecting} of ${late} late sends waited for their connection${longest}: ${cause}, not the client's schedule`
}
