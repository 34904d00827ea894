import type { ReasoningTokenSource, RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import type { Distribution } from './distribution.js'

/**
 * A reasoning model thinks before it answers, and TTFT (the first token of either) then measures
 * the start of the thinking. These figures split the two phases. Per request, in milliseconds;
 * null when the request has no such figure (or is a record of a version that did not stamp them).
 */

/** Time to first reasoning token: send to the first event carrying reasoning. */
export function ttfrMs(record: RequestRecord): number | null {
  const at = record.first_reasoning_at
  return at == null ? null : at - record.sent_at
}

/** Time to first output (answer) token: send to the first event carrying content, refusal, text or a tool call. */
export function ttfoMs(record: RequestRecord): number | null {
  const at = record.first_answer_at
  return at == null ? null : at - record.sent_at
}

/** Output tokens of the answer: output_tokens minus the reasoning ones; null for records without phases. */
export function answerTokens(record: RequestRecord): number | null {
  if (record.first_answer_at === undefined) return null
  return Math.max(0, record.output_tokens - (record.reasoning_output_tokens ?? 0))
}

/** Answer-phase time per output token: (end - first answer token) / (answer tokens - 1). */
export function answerTpotMs(record: RequestRecord): number | null {
  const at = record.first_answer_at
  const tokens = answerTokens(record)
  if (at == null || tokens === null || tokens < 2) return null
  return (record.end_at - at) / (tokens - 1)
}

/** A request that reasoned: reasoning events came, or the server counted reasoning tokens. */
export function reasoned(record: RequestRecord): boolean {
  return (
    record.first_reasoning_at != null ||
    (record.reasoning_output_tokens ?? 0) > 0 ||
    unstreamedReasoningTokens(record) > 0
  )
}

/**
 * Usage counted reasoning tokens and no reasoning event came: the server thinks without streaming
 * its thoughts (OpenAI's o-series, a vLLM without a reasoning parser behind a gateway that drops
 * them), so the first event is the answer and TTFT includes the whole thinking.
 */
export function reasoningHidden(record: RequestRecord): boolean {
  return unstreamedReasoningTokens(record) > 0
}

/**
 * One request's reasoning in words, for a probe's line (`check`, the preflight): empty when it did
 * not reason; else its reasoning tokens and their source, and its TTFO or that no answer came.
 */
export function reasoningPhrase(record: RequestRecord): string {
  if (!reasoned(record)) return ''
  const tokens = record.reasoning_output_tokens ?? record.reasoning_tokens ?? 0
  const source = record.reasoning_token_source ?? 'usage'
  const ttfo = ttfoMs(record)
  const answer = ttfo === null ? 'no answer token yet' : `TTFO ${ttfo.toFixed(0)} ms`
  const hidden = reasoningHidden(record) ? ', not streamed' : ''
  return `; reasoning ${tokens} tokens (${source}${hidden}), ${answer}`
}

/** A level's reasoning figures, over its successful requests; absent from the level when none reasoned. */
export interface ReasoningFigures {
  /** Successful requests that reasoned (reasoning events, or reasoning tokens in usage). */
  requests_reasoning: number
  /** Time to first reasoning token, over the requests whose reasoning arrived as events. */
  ttfr_ms: Distribution
  /** Time to first output (answer) token, over every successful request that answered. */
  ttfo_ms: Distribution
  /** Reasoning tokens per request, over the requests that reasoned. */
  reasoning_tokens: Distribution
  /** Answer tokens per request (output minus reasoning), over every successful request. */
  answer_tokens: Distribution
  /** Answer-phase TPOT: (end - first answer token) / (answer tokens - 1). */
  answer_tpot_ms: Distribution
  /** Where the reasoning counts came from: requests per source. */
  reasoning_token_sources: Record<ReasoningTokenSource, number>
  /** Requests whose usage reported reasoning tokens that never arrived as events (see reasoningHidden). */
  reasoning_hidden: number
}

export function reasoningFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): ReasoningFigures | null {
  return accumulate(records, reasoningAccumulator(percentiles))
}

/** The same, fed record by record. */
export function reasoningAccumulator(percentiles: readonly number[]): Accumulator<ReasoningFigures | null> {
  const ttfr = new Samples()
  const ttfo = new Samples()
  const reasoningTokens = new Samples()
  const answer = new Samples()
  const answerTpot = new Samples()
  const sources: Record<ReasoningTokenSource, number> = { usage: 0, events: 0, tokenizer: 0 }
  let reasoning = 0
  let hidden = 0
  return {
    add(record) {
      if (!isOk(record)) return
      ttfo.pushFigure(ttfoMs(record))
      answer.pushFigure(answerTokens(record))
      answerTpot.pushFigure(answerTpotMs(record))
      if (!reasoned(record)) return
      reasoning++
      ttfr.pushFigure(ttfrMs(record))
      reasoningTokens.push(record.reasoning_output_tokens ?? 0)
      if (record.reasoning_token_source !== undefined) sources[record.reasoning_token_source]++
      if (reasoningHidden(record)) hidden++
    },
    result() {
      if (reasoning === 0) return null
      return {
        requests_reasoning: reasoning,
        ttfr_ms: ttfr.distribution(percentiles),
        ttfo_ms: ttfo.distribution(percentiles),
        reasoning_tokens: reasoningTokens.distribution(percentiles),
        answer_tokens: answer.distribution(percentiles),
        answer_tpot_ms: answerTpot.distribution(percentiles),
        reasoning_token_sources: sources,
        reasoning_hidden: hidden,
      }
    },
  }
}

/** The level's notes about reasoning: the server hid it, so TTFT includes the thinking. */
export function reasoningNotes(figures: ReasoningFigures | undefined): string[] {
  if (figures === undefined || figures.reasoning_hidden === 0) return []
  return [
    `reasoning hidden by the server: ${figures.reasoning_hidden} of ${figures.requests_reasoning} reasoning ` +
      'requests had reasoning tokens in their usage and no reasoning event, so TTFT includes the thinking ' +
      "(TTFO and TTFT are the same moment for them); the comparisons of TTFT with the server's own first " +
      'token (time outside its scheduler, queue before the engine) leave them out',
  ]
}
