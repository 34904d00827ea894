import type { RunConfig } from '../../config/types.js'
import { seededRandom } from '../../random.js'
import type { SessionWork } from '../../worker/protocol.js'
import { ExactPromptSource } from '../../workload/exact-prompts.js'
import { drawLength } from '../../workload/lengths.js'
import {
  loadSessions,
  MAX_TURNS,
  type SessionSet,
  type SessionSpec,
  syntheticSessions,
} from '../../workload/sessions.js'
import type { Tokenizer } from '../../workload/tokenizers.js'
import type { WorkloadPlan } from './workload-plan.js'

/** Distinct synthetic sessions at most (enough for a whole run of requests_per_level); later sessions repeat them under new ids. */
const DISTINCT_SESSIONS = 256

/**
 * The run's sessions (--sessions): the dataset's conversations, or synthetic ones of `turns` user
 * turns drawn from the input and output lengths, behind a shared system prompt of `shared_prefix`
 * tokens. Loaded before anything is sent, so a bad file fails first.
 */
export function planSessions(config: RunConfig, tokenizer: Tokenizer, plannedRequests: number): SessionSet {
  const { workload } = config
  if (workload.dataset !== null)
    return loadSessions(workload.dataset, (text) => tokenizer.count(text), workload.output_tokens)
  const turns = Math.min(MAX_TURNS, workload.turns)
  const random = seededRandom(workload.seed * 7919 + 17)
  const system =
    workload.shared_prefix > 0
      ? new ExactPromptSource(tokenizer, {
          seed: workload.seed,
          sharedPrefixTokens: workload.shared_prefix,
        }).prompt(0, workload.shared_prefix)
      : ''
  const sessions = syntheticSessions(new ExactPromptSource(tokenizer, { seed: workload.seed }), system, {
    // Twice the sessions a run needs: threads take session numbers in strides, so n mod count repeats sooner.
    count: Math.max(1, Math.min(DISTINCT_SESSIONS, 2 * Math.ceil(plannedRequests / turns))),
    turns,
    inputTokens: () => drawLength(workload.input, random, workload.input_tokens),
    outputTokens: () => drawLength(workload.output, random, workload.output_tokens),
  })
  const prefix = workload.shared_prefix > 0 ? `, a ${workload.shared_prefix}-token shared system prompt` : ''
  return {
    source: `synthetic sessions (${sessions.length} of ${turns} turns${prefix}, seed ${workload.seed})`,
    sessions,
  }
}

/**
 * Mean prompt tokens per request if every reply reaches its max_tokens: turn t carries the preamble,
 * user turns 0..t and replies 0..t-1. An upper bound for the cost estimate (replies may stop early).
 */
export function sessionMeans(
  sessions: readonly SessionSpec[],
  count: (text: string) => number,
): { input_mean: number; output_mean: number } {
  let requests = 0
  let input = 0
  let output = 0
  for (const session of sessions) {
    let history = session.preamble.reduce((sum, m) => sum + count(m.content), 0)
    session.turns.forEach((text, t) => {
      history += count(text)
      input += history
      const out = session.output_tokens[t] as number
      output += out
      history += out
      requests++
    })
  }
  return {
    input_mean: Math.round(input / Math.max(1, requests)),
    output_mean: Math.round(output / Math.max(1, requests)),
  }
}

/** What the workers need to run the plan's sessions; undefined for a run of single prompts. */
export function sessionWork(plan: WorkloadPlan, config: RunConfig): SessionWork | undefined {
  if (plan.sessions === undefined) return undefined
  const work: SessionWork = { specs: plan.sessions, thinkMs: config.workload.think_time_s * 1000 }
  return plan.structured === undefined ? work : { ...work, structured: plan.structured }
}
