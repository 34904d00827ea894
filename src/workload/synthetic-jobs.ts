import type { ChatMessage } from '../protocols/prompt.js'
import type { TextOfLength } from './job-file.js'
import { type JobSpec, type JobTurn, MAX_JOB_TURNS } from './jobs.js'

export interface SyntheticJobOptions {
  count: number
  /** Steps per job (--turns): the job's depth + 1. */
  steps: number
  /** Parallel sub-agent turns at step 1 (--fan-out); 1 = a plain chain. */
  fanOut: number
  /** Mean tool wait after a turn that has children, ms (--tool-wait); 0 = none. */
  toolWaitMeanMs: number
  /** Each turn's delta and reply lengths: the run's input and output distributions. */
  inputTokens: () => number
  outputTokens: () => number
  random: () => number
}

/**
 * Synthetic agentic jobs, for a user without traces, with stated distributions (docs/workloads.md):
 * - steps: exactly `steps` per job; step 0 is one root turn (the plan);
 * - fan-out: with `fanOut` > 1 and at least 2 steps, step 1 is `fanOut` turns run in parallel (sub-
 *   agents), and step 2, when there is one, joins them; every other step is one turn after the last;
 * - delta and output: each turn's user message and max_tokens drawn from the run's input and output
 *   length distributions (--input-tokens, --output-tokens);
 * - tool wait: after every turn that has a child, exponential with mean `toolWaitMeanMs` (a tool's
 *   run time: many short calls, a few long ones); the last step waits for nothing.
 * Every job starts with the same system prompt (`systemPrompt`, --shared-prefix), as an agent's
 * fixed instructions do. Deterministic for a given `random`.
 */
export function syntheticJobs(
  text: TextOfLength,
  systemPrompt: string,
  options: SyntheticJobOptions,
): JobSpec[] {
  const preamble: ChatMessage[] = systemPrompt === '' ? [] : [{ role: 'system', content: systemPrompt }]
  const jobs: JobSpec[] = []
  for (let j = 0; j < options.count; j++) {
    const turns: JobTurn[] = []
    let previous: number[] = []
    for (let step = 0; step < options.steps; step++) {
      const width = step === 1 ? options.fanOut : 1
      const added: number[] = []
      for (let b = 0; b < width && turns.length < MAX_JOB_TURNS; b++) {
        added.push(turns.length)
        turns.push({
          // Distinct prompt ids per (job, turn): every delta starts differently.
          input: text.prompt((j + 1) * MAX_JOB_TURNS + turns.length, Math.max(1, options.inputTokens())),
          output_tokens: Math.max(1, options.outputTokens()),
          tool_wait_ms: 0,
          parents: [...previous],
        })
      }
      // The turns before this step have a child now: the tool they called runs before it.
      for (const parent of previous) (turns[parent] as JobTurn).tool_wait_ms = toolWait(options)
      previous = added
      if (added.length === 0) break
    }
    jobs.push({ id: `synthetic-${j + 1}`, preamble, turns })
  }
  return jobs
}

/** Exponential with the set mean, rounded to whole ms; 0 when tool waits are off. */
function toolWait(options: SyntheticJobOptions): number {
  if (options.toolWaitMeanMs <= 0) return 0
  return Math.round(-options.toolWaitMeanMs * Math.log(1 - options.random()))
}
