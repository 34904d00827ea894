import type { GaugeTerm } from './vocabulary.js'

/**
 * Speculative decoding as the engine counts it over a level, from its /metrics: vLLM's (and newer
 * llama.cpp's) spec_decode counters, their increase over the measured window; SGLang's running
 * gauges where there are no counters.
 */
export interface SpecDecodeFigures {
  /** Verification steps that carried drafts (vLLM: one per request per step). */
  drafts: number | null
  draft_tokens: number | null
  accepted_tokens: number | null
  /** accepted / draft tokens; else SGLang's spec_accept_rate gauge, its mean over the level. */
  acceptance_rate: number | null
  /** 1 + accepted / drafts: a step's accepted drafts plus its own token; else SGLang's spec_accept_length gauge, its mean. */
  acceptance_length: number | null
}

/** The level's figures from its counters' increases and its gauges; null when the engine publishes none. */
export function specDecodeFigures(
  counter: (term: 'spec_drafts' | 'spec_draft_tokens' | 'spec_accepted_tokens') => number | null,
  gauge: (term: GaugeTerm) => { mean: number } | null,
): SpecDecodeFigures | null {
  const drafts = counter('spec_drafts')
  const draftTokens = counter('spec_draft_tokens')
  const accepted = counter('spec_accepted_tokens')
  // SGLang publishes its gauges at 0 when it does not speculate: a length under 1 says nothing.
  const lengthGauge = positive(gauge('spec_accept_length')?.mean ?? null)
  const rateGauge = lengthGauge === null ? null : (gauge('spec_accept_rate')?.mean ?? null)
  if ([drafts, draftTokens, accepted, rateGauge, lengthGauge].every((value) => value === null)) return null
  return {
    drafts,
    draft_tokens: draftTokens,
    accepted_tokens: accepted,
    acceptance_rate:
      accepted !== null && draftTokens !== null && draftTokens > 0
        ? fraction(accepted / draftTokens)
        : rateGauge,
    acceptance_length:
      accepted !== null && drafts !== null && drafts > 0 ? fraction(1 + accepted / drafts) : lengthGauge,
  }
}

function positive(value: number | null): number | null {
  return value !== null && value >= 1 ? value : null
}

function fraction(value: number): number {
  return Math.round(value * 10_000) / 10_000
}
