/**
 * The simulator's reasoning phase: a reasoning model's first output tokens are its thinking, streamed
 * in a field of their own (`reasoning_content`, as vLLM's and SGLang's reasoning parsers and DeepSeek
 * send it) before the answer's `content`; usage counts them in completion_tokens and says how many
 * in completion_tokens_details.reasoning_tokens. Hidden, the thinking takes its decode time but is
 * never sent (OpenAI's o-series): the first event is the answer, and only usage tells.
 *
 * Format-neutral: a stream format that has a reasoning field gives its frame (`ReasoningFrame`);
 * the sink asks `phaseOf` for each token and picks the frame. A format without one (legacy
 * completions) gets no reasoning phase at all.
 */

export interface SimReasoning {
  /** Reasoning tokens per response (max_tokens bounds thinking and answer together). */
  tokens: number
  /** Think without sending it: no reasoning event, usage still counts them. */
  hidden?: boolean
}

/** What a token is: thinking sent as such, thinking not sent, or the answer. */
export type TokenPhase = 'reasoning' | 'hidden' | 'answer'

/** The text around one reasoning token's event in a stream format. */
export interface ReasoningFrame {
  prefix: string
  suffix: string
}

/** One response's phases: its first `tokens` tokens are reasoning, `hidden` or sent. */
export interface ReasoningPlan {
  tokens: number
  hidden: boolean
}

export function checkReasoning(reasoning: SimReasoning | undefined): SimReasoning | null {
  if (reasoning === undefined || reasoning.tokens === 0) return null
  if (!(Number.isInteger(reasoning.tokens) && reasoning.tokens > 0))
    throw new RangeError(`reasoning tokens must be a non-negative integer, got ${reasoning.tokens}`)
  return reasoning
}

/**
 * The phases of a response of `outputTokens` tokens, or null when it does not reason (reasoning
 * off, or a format without a reasoning field). A response cut by max_tokens while thinking is all
 * reasoning, as a real one is.
 */
export function reasoningPlan(
  reasoning: SimReasoning | null,
  formatReasons: boolean,
  outputTokens: number,
): ReasoningPlan | null {
  if (reasoning === null || !formatReasons) return null
  return { tokens: Math.min(reasoning.tokens, outputTokens), hidden: reasoning.hidden === true }
}

export function phaseOf(plan: ReasoningPlan | null, index: number): TokenPhase {
  if (plan === null || index >= plan.tokens) return 'answer'
  return plan.hidden ? 'hidden' : 'reasoning'
}

/** The chat stream's reasoning event around a `"choices":[{"index":0,` prefix: a reasoning_content delta. */
export function chatReasoningFrame(choice: string): ReasoningFrame {
  return {
    prefix: `${choice}"delta":{"reasoning_content":"`,
    suffix: '"},"finish_reason":null}]}\n\n',
  }
}

/** usage with completion_tokens_details.reasoning_tokens when the response reasoned, else as it was. */
export function withReasoningUsage<U extends object>(
  usage: U,
  plan: ReasoningPlan | null,
): U | (U & { completion_tokens_details: { reasoning_tokens: number } }) {
  if (plan === null) return usage
  return { ...usage, completion_tokens_details: { reasoning_tokens: plan.tokens } }
}
