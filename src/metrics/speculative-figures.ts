import { type AnyFigure, accumulator, figure } from './figure.js'
import { shownAcceptanceLength, speculativeAccumulator } from './speculative.js'

/**
 * The speculative-decoding figures of a level, declared for the catalogue (figure-catalogue.ts):
 * the whole account (levels[].speculative) and the one number the per-level table shows.
 */
export const SPECULATIVE_FIGURES: readonly AnyFigure[] = [
  figure({
    fields: {
      speculative: {
        unit: 'object',
        definition:
          "levels[].speculative, speculative decoding over the successful requests, two ways. cadence: from the client's own " +
          "event times, after the fact: events less than 1 ms apart form one decode step (an engine writes a step's " +
          "accepted tokens in a burst, 0.1-0.2 ms apart on llama.cpp), the first event (the prefill's token) left out; over " +
          'requests whose events carried one token each (requests_multi_token_events counts the others: a step per ' +
          'event, see events.tokens_per_event): requests, steps, tokens, acceptance_length = tokens / steps (1 without ' +
          'speculation), steps_by_tokens (the histogram: steps by the tokens they delivered, accepted drafts + 1), ' +
          'longest_step (the largest step size seen in at least 1% of the steps), draft_acceptance_rate = accepted ' +
          'drafts / (steps x (longest_step - 1)) (the client does not see ' +
          'the draft length; an engine that drafts fewer at times, or alternates plain steps, reads low), step_ms and ' +
          'tpot_per_accepted_token_ms (per request, from its first step to its last, per step and per token those ' +
          'later steps delivered), held_bursts, tells and why: false when every step was one token (a server that ' +
          'speculates but paces its events looks the same), when fewer than 5% of the steps delivered more than one ' +
          'token (then taken as events held up and written together, a token a step: held_bursts), or when the steps ' +
          'themselves come under 4 ms apart. A server or client late to write or read delivers events that waited ' +
          'as one burst: a server whose writes clump all along reads as speculation here. server: what ' +
          "the engine said per request: llama.cpp's timings.draft_n / draft_n_accepted, SGLang's meta_info.spec_*: " +
          "requests, draft_tokens, accepted_tokens, acceptance_rate (accepted / drafted, else the mean of the engine's " +
          'own rate), acceptance_length (output tokens / steps: spec_verify_ct, on llama.cpp predicted_n - ' +
          "draft_n_accepted target passes; else the mean of the engine's own). vLLM's counters are server.spec_decode. " +
          'Absent when neither applies (no streamed request with two events, nothing said).',
      },
    },
    absentWhenNull: true,
    source: {
      accumulator: ({ options }) => {
        const fed = speculativeAccumulator(options.percentiles)
        return accumulator(fed.add, () => ({ speculative: fed.result() ?? undefined }))
      },
    },
  }),
  figure({
    fields: {
      acceptance_length: {
        unit: 'tokens per decode step',
        definition:
          "The level's acceptance length as the table shows it: speculative.server.acceptance_length when the engine " +
          'said, else speculative.cadence.acceptance_length when the cadence tells; absent otherwise.',
      },
    },
    absentWhenNull: true,
    source: {
      derive: ({ figures }) => ({
        acceptance_length: shownAcceptanceLength(figures.speculative) ?? undefined,
      }),
    },
    columns: [
      {
        name: 'accept len',
        head: 'accept\nlen',
        order: 6.5,
        priority: 12,
        cell: { kind: 'fixed', digits: 2 },
        whenPresent: true,
      },
    ],
  }),
]
