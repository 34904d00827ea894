import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { type Distribution, percentileOfSorted, round } from './distribution.js'
import { countsEvents, streamedTokens } from './token-timeline.js'

/**
 * Speculative decoding over a level, two ways: from the client's own cadence (a step's accepted tokens
 * arrive as a burst of events a fraction of a millisecond apart, the steps milliseconds apart), and
 * from what the engine said of each request in its response (llama.cpp's timings, SGLang's meta_info).
 * A pure function of the records, read after the fact from their token times: nothing is added to
 * the per-event path. vLLM's spec_decode counters come from its /metrics (server.spec_decode).
 */
export interface SpeculativeFigures {
  cadence: CadenceFigures | null
  server: InBandSpeculation | null
}

export interface CadenceFigures {
  /** Successful requests whose events each carried one token, with at least two events. */
  requests: number
  /** Decode steps seen (bursts of events), the first token of each request (the prefill's) left out. */
  steps: number
  /** Tokens those steps delivered. */
  tokens: number
  /** tokens / steps: a step's accepted draft tokens plus the target's own one. 1 without speculation. */
  acceptance_length: number
  /** Steps by the tokens they delivered ("1": steps of one token, ...): accepted drafts + 1. */
  steps_by_tokens: Record<string, number>
  /**
   * The most tokens a step delivered, counting only sizes seen in at least 1% of the steps: two steps
   * whose events were held up and written together now and then would otherwise set it.
   */
  longest_step: number
  /**
   * Accepted draft tokens / drafted, taking every step to have drafted longest_step − 1 tokens (the
   * client does not see the draft length; an engine that drafts fewer at times reads low here). Null
   * without a step of more than one token.
   */
  draft_acceptance_rate: number | null
  /** Per request: from its first step to its last, per step, ms. */
  step_ms: Distribution
  /** Per request: from its first step to its last, per token those later steps delivered, ms. */
  tpot_per_accepted_token_ms: Distribution
  /** Bursts taken as hold-ups (too few to be speculation, see MIN_MULTI_TOKEN_SHARE): counted as a token a step. */
  held_bursts: number
  /** Whether the cadence can tell the steps apart; when not, why. */
  tells: boolean
  why?: string
  /** Successful requests left out because their events carried several tokens each (a step per event). */
  requests_multi_token_events: number
}

export interface InBandSpeculation {
  /** Successful requests the engine said anything about. */
  requests: number
  draft_tokens: number | null
  accepted_tokens: number | null
  /** accepted / draft tokens over the requests that gave both, else the mean of the engine's own per-request rate. */
  acceptance_rate: number | null
  /**
   * Output tokens / verification steps: SGLang's spec_verify_ct; on llama.cpp a step is a target pass,
   * each giving one token of its own, so steps = predicted_n − draft_n_accepted. Else the mean of the
   * engine's own per-request length.
   */
  acceptance_length: number | null
}

/**
 * Events closer than this belong to one decode step. llama.cpp writes a step's accepted tokens 0.1–0.2 ms
 * apart; a decode step of a real model takes milliseconds, even on a GPU.
 */
export const BURST_GAP_MS = 1
/** Below this many ms between steps (median), a burst cannot be told from a step. */
const STEPS_TOO_CLOSE_MS = 4 * BURST_GAP_MS
/**
 * Below this share of steps of more than one token, bursts are no evidence of speculation: events
 * held up and written together (a server or client late to write or read) arrive the same way. On
 * the kit's llama.cpp without a draft, on a loaded 2-core machine, they came to 0.3-1.6% of the steps
 * at most levels, but to 9.6% at one (a false reading this floor does not catch: see docs/results.md).
 */
export const MIN_MULTI_TOKEN_SHARE = 0.05
/** A step size seen in fewer than this share of the steps does not set longest_step. */
const LONGEST_STEP_SHARE = 0.01

export function speculativeFigures(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): SpeculativeFigures | null {
  return accumulate(records, speculativeAccumulator(percentiles))
}

/** The same, fed record by record. */
export function speculativeAccumulator(
  percentiles: readonly number[],
): Accumulator<SpeculativeFigures | null> {
  const cadence = cadenceAccumulator(percentiles)
  const server = inBandSpeculationAccumulator()
  return {
    add(record) {
      cadence.add(record)
      server.add(record)
    },
    result() {
      const figures = { cadence: cadence.result(), server: server.result() }
      return figures.cadence === null && figures.server === null ? null : figures
    },
  }
}

/** The sizes of a request's decode steps, from its event times: the first event (the prefill's token) left out. */
export function stepSizes(tokenTimes: readonly number[]): { sizes: number[]; starts: number[] } {
  const sizes: number[] = []
  const starts: number[] = []
  for (let i = 1; i < tokenTimes.length; i++) {
    const at = tokenTimes[i] as number
    if (sizes.length > 0 && at - (tokenTimes[i - 1] as number) < BURST_GAP_MS) {
      sizes[sizes.length - 1] = (sizes[sizes.length - 1] as number) + 1
      continue
    }
    sizes.push(1)
    starts.push(at)
  }
  return { sizes, starts }
}

function cadenceAccumulator(percentiles: readonly number[]): Accumulator<CadenceFigures | null> {
  const bySize = new Map<number, number>()
  const stepMs = new Samples()
  const perToken = new Samples()
  const stepGaps = new Samples()
  let requests = 0
  let multiToken = 0
  let steps = 0
  let tokens = 0
  return {
    add(record) {
      if (!isOk(record) || !countsEvents(record)) return
      if (record.chunks !== streamedTokens(record) || record.token_times.length !== record.chunks) {
        multiToken++
        return
      }
      const { sizes, starts } = stepSizes(record.token_times)
      if (sizes.length === 0) return
      requests++
      let later = 0
      for (let i = 0; i < sizes.length; i++) {
        const size = sizes[i] as number
        bySize.set(size, (bySize.get(size) ?? 0) + 1)
        tokens += size
        if (i > 0) {
          later += size
          stepGaps.push((starts[i] as number) - (starts[i - 1] as number))
        }
      }
      steps += sizes.length
      if (sizes.length < 2) return
      const span = (starts[starts.length - 1] as number) - (starts[0] as number)
      stepMs.push(span / (sizes.length - 1))
      perToken.push(span / later)
    },
    result() {
      if (requests === 0) return null
      const multiTokenSteps = steps - (bySize.get(1) ?? 0)
      // Too few bursts to be a draft's: hold-ups, each token a step of its own.
      const floor = multiTokenSteps > 0 && multiTokenSteps < MIN_MULTI_TOKEN_SHARE * steps
      const counted = floor ? new Map([[1, tokens]]) : bySize
      const stepCount = floor ? tokens : steps
      const longest = Math.max(
        1,
        ...[...counted].filter(([, count]) => count >= LONGEST_STEP_SHARE * stepCount).map(([size]) => size),
      )
      const medianGap = stepGaps.length === 0 ? null : percentileOfSorted(stepGaps.sorted(), 50)
      return {
        requests,
        steps: stepCount,
        tokens,
        acceptance_length: round(tokens / stepCount, 3),
        steps_by_tokens: Object.fromEntries(
          [...counted].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), v]),
        ),
        longest_step: longest,
        draft_acceptance_rate:
          longest > 1 ? round((tokens - stepCount) / (stepCount * (longest - 1)), 4) : null,
        step_ms: stepMs.distribution(percentiles),
        tpot_per_accepted_token_ms: perToken.distribution(percentiles),
        held_bursts: floor ? multiTokenSteps : 0,
        ...judgeCadence(longest, medianGap, floor ? multiTokenSteps / steps : null),
        requests_multi_token_events: multiToken,
      }
    },
  }
}

/** Whether the steps seen are the engine's: none of more than one token, or steps too close to tell. */
/** `underFloor`: the share of steps of several tokens, when it was too small to be speculation. */
function judgeCadence(
  longest: number,
  medianStepGapMs: number | null,
  underFloor: number | null,
): { tells: boolean; why?: string } {
  if (medianStepGapMs !== null && medianStepGapMs < STEPS_TOO_CLOSE_MS)
    return {
      tells: false,
      why: `steps come ${round(medianStepGapMs, 2)} ms apart (median), too close to the ${BURST_GAP_MS} ms that joins a burst to tell a burst from a step`,
    }
  if (underFloor !== null)
    return {
      tells: false,
      why: `${round(underFloor * 100, 1)}% of the steps delivered more than one token, under the ${MIN_MULTI_TOKEN_SHARE * 100}% that events held up and written together reach without speculation: taken as hold-ups, a token a step`,
    }
  if (longest === 1)
    return {
      tells: false,
      why: `every step one token (no two events within ${BURST_GAP_MS} ms); a server that speculates but sends its tokens at a steady pace looks the same`,
    }
  return { tells: true }
}

function inBandSpeculationAccumulator(): Accumulator<InBandSpeculation | null> {
  let requests = 0
  let drafted = 0
  let accepted = 0
  let withBoth = 0
  let stepTokens = 0
  let stepCount = 0
  let rateSum = 0
  let rates = 0
  let lengthSum = 0
  let lengths = 0
  return {
    add(record) {
      const said = record.server_speculation
      if (said === undefined || !isOk(record)) return
      requests++
      if (said.draft_tokens !== null && said.accepted_tokens !== null) {
        withBoth++
        drafted += said.draft_tokens
        accepted += said.accepted_tokens
      }
      const steps = said.steps ?? llamaCppSteps(record)
      if (steps !== null && steps > 0) {
        stepCount += steps
        stepTokens += record.output_tokens
      }
      if (said.accept_rate !== null) {
        rateSum += said.accept_rate
        rates++
      }
      if (said.accept_length !== null) {
        lengthSum += said.accept_length
        lengths++
      }
    },
    result() {
      if (requests === 0) return null
      return {
        requests,
        draft_tokens: withBoth === 0 ? null : drafted,
        accepted_tokens: withBoth === 0 ? null : accepted,
        acceptance_rate:
          withBoth > 0 && drafted > 0
            ? round(accepted / drafted, 4)
            : rates > 0
              ? round(rateSum / rates, 4)
              : null,
        acceptance_length:
          stepCount > 0
            ? round(stepTokens / stepCount, 3)
            : lengths > 0
              ? round(lengthSum / lengths, 3)
              : null,
      }
    },
  }
}

/** llama.cpp: each target pass gives one token of its own beside the drafts it accepted. */
function llamaCppSteps(record: RequestRecord): number | null {
  const accepted = record.server_speculation?.accepted_tokens ?? null
  const predicted = record.server_timings?.predicted_n ?? null
  return accepted === null || predicted === null ? null : predicted - accepted
}

/** The level's acceptance length to show: the engine's when it said, else the cadence's when it saw bursts. */
export function shownAcceptanceLength(figures: SpeculativeFigures | undefined): number | null {
  const server = figures?.server?.acceptance_length ?? null
  if (server !== null) return server
  const cadence = figures?.cadence
  return cadence?.tells ? cadence.acceptance_length : null
}
