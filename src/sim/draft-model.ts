/**
 * A draft model for speculative decoding, so a test knows the truth it should recover: every decode
 * step drafts `max` tokens, the target accepts a prefix of them (the first rejection ends the step),
 * and the step delivers the accepted drafts plus one token of its own. `acceptance` is the draft
 * acceptance rate as vLLM counts it, accepted / drafted over many steps: each draft token is accepted,
 * given the ones before it were, with the probability that makes the expected share that rate.
 *
 * The capacity model times a step as it times a token (verifying k drafts costs about one decode
 * pass when the batch is memory-bound); the step's tokens are written back to back, as llama.cpp does.
 */

import type { JobSink, JobTimeline } from '../model/engine.js'

export interface SimDraft {
  /** Accepted / drafted tokens, in [0, 1]. */
  acceptance: number
  /** Draft tokens per step, 1 to 16. Default 4 (llama.cpp's --draft-max 4 of the kit). */
  max?: number
}

export const DEFAULT_DRAFT_MAX = 4

export function checkDraft(draft: SimDraft | undefined): Required<SimDraft> | null {
  if (draft === undefined) return null
  const max = draft.max ?? DEFAULT_DRAFT_MAX
  if (!(draft.acceptance >= 0 && draft.acceptance <= 1))
    throw new RangeError(`draft acceptance must be in [0, 1], got ${draft.acceptance}`)
  if (!(Number.isInteger(max) && max >= 1 && max <= 16))
    throw new RangeError(`draft max must be an integer from 1 to 16, got ${max}`)
  return { acceptance: draft.acceptance, max }
}

/**
 * The chance a draft token is accepted given the ones before it were, such that the expected
 * accepted share of `max` drafts, (a + a² + ... + a^max) / max, is `rate`: increasing in a, so bisected.
 */
export function positionAcceptance(rate: number, max: number): number {
  const share = (a: number): number => {
    let sum = 0
    let power = 1
    for (let i = 0; i < max; i++) {
      power *= a
      sum += power
    }
    return sum / max
  }
  let low = 0
  let high = 1
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2
    if (share(mid) < rate) low = mid
    else high = mid
  }
  return (low + high) / 2
}

/** One request's steps: tokens each delivers (the first, the prefill's, one), and the drafts behind them. */
export interface DraftPlan {
  steps: number[]
  /** Draft tokens proposed in each step (none in the first): fewer than max where the output ends. */
  drafts: number[]
  /** Draft tokens proposed and accepted over the steps. */
  drafted: number
  accepted: number
}

export function draftPlan(draft: Required<SimDraft>, outputTokens: number, random: () => number): DraftPlan {
  const perPosition = positionAcceptance(draft.acceptance, draft.max)
  const steps = [1]
  const drafts = [0]
  let left = outputTokens - 1
  let drafted = 0
  let accepted = 0
  while (left > 0) {
    let taken = 0
    while (taken < draft.max && random() < perPosition) taken++
    // Drafting stops where the output does: max_tokens is a hard end.
    const size = Math.min(taken + 1, left)
    const proposed = Math.min(draft.max, left - 1)
    drafts.push(proposed)
    drafted += proposed
    accepted += size - 1
    steps.push(size)
    left -= size
  }
  return { steps, drafts, drafted, accepted }
}

/** What counts a step as it happens (the simulator's /metrics). */
export interface StepObserver {
  step(tokens: number, drafted: number): void
}

/** A sink fed once per step by the engine that hands the step's tokens to `inner`, one event each. */
export function stepSink(
  plan: DraftPlan,
  inner: JobSink & { open?: () => void },
  observer: StepObserver,
): JobSink & { open?: () => void } {
  let token = 0
  return {
    open: inner.open?.bind(inner),
    onToken(step: number) {
      const size = plan.steps[step] ?? 1
      observer.step(size, plan.drafts[step] ?? 0)
      for (let i = 0; i < size; i++) inner.onToken(token++)
    },
    onFinish(timeline: JobTimeline) {
      inner.onFinish(timeline)
    },
  }
}
