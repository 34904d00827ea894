import type { RunConfig } from '../../config/types.js'
import { seededRandom } from '../../random.js'
import type { JobWork } from '../../worker/protocol.js'
import { ExactPromptSource } from '../../workload/exact-prompts.js'
import { loadJobFile } from '../../workload/job-file.js'
import { ancestorsOf, type JobSet, type JobSpec, MAX_JOB_TURNS } from '../../workload/jobs.js'
import { drawLength } from '../../workload/lengths.js'
import { syntheticJobs } from '../../workload/synthetic-jobs.js'
import type { Tokenizer } from '../../workload/tokenizers.js'
import type { WorkloadPlan } from './workload-plan.js'

/** Distinct synthetic jobs at most; later jobs repeat them under new ids (as sessions do). */
const DISTINCT_JOBS = 256

/**
 * The run's jobs (--jobs): the dataset read as a job file, or synthetic jobs of `turns` steps with a
 * `fan_out`-wide step 1, tool waits of mean `tool_wait_s`, deltas and replies drawn from the input
 * and output lengths, behind a shared system prompt of `shared_prefix` tokens. Loaded before
 * anything is sent, so a bad file fails first.
 */
export function planJobs(config: RunConfig, tokenizer: Tokenizer, plannedRequests: number): JobSet {
  const { workload } = config
  const text = new ExactPromptSource(tokenizer, { seed: workload.seed })
  const system =
    workload.shared_prefix > 0
      ? new ExactPromptSource(tokenizer, {
          seed: workload.seed,
          sharedPrefixTokens: workload.shared_prefix,
        }).prompt(0, workload.shared_prefix)
      : ''
  if (workload.dataset !== null) {
    const set = loadJobFile(workload.dataset, text, workload.output_tokens)
    if (system === '') return set
    // A shared prefix before every job, as vLLM's --global-prefix-len puts one before every trajectory.
    return {
      source: `${set.source}, a ${workload.shared_prefix}-token shared system prompt first`,
      jobs: set.jobs.map((job) => ({
        ...job,
        preamble: [{ role: 'system', content: system }, ...job.preamble],
      })),
    }
  }
  const steps = Math.min(MAX_JOB_TURNS, workload.turns)
  const fanOut = Math.min(MAX_JOB_TURNS - steps + 1, workload.fan_out)
  const turnsPerJob = steps >= 2 ? steps + fanOut - 1 : steps
  const random = seededRandom(workload.seed * 7919 + 29)
  const jobs = syntheticJobs(text, system, {
    // Twice the jobs a run needs: threads take job numbers in strides, so n mod count repeats sooner.
    count: Math.max(1, Math.min(DISTINCT_JOBS, 2 * Math.ceil(plannedRequests / turnsPerJob))),
    steps,
    fanOut,
    toolWaitMeanMs: workload.tool_wait_s * 1000,
    inputTokens: () => drawLength(workload.input, random, workload.input_tokens),
    outputTokens: () => drawLength(workload.output, random, workload.output_tokens),
    random,
  })
  const prefix = workload.shared_prefix > 0 ? `, a ${workload.shared_prefix}-token shared system prompt` : ''
  const wait = workload.tool_wait_s > 0 ? `, tool waits of mean ${workload.tool_wait_s} s` : ''
  return {
    source: `synthetic jobs (${jobs.length} of ${steps} steps, fan-out ${fanOut}${wait}${prefix}, seed ${workload.seed})`,
    jobs,
  }
}

/**
 * Mean prompt and output tokens per request if every reply reaches its max_tokens: a turn carries
 * the preamble, its ancestors' deltas and replies, and its own delta. An upper bound for the cost
 * estimate, as for sessions.
 */
export function jobMeans(
  jobs: readonly JobSpec[],
  count: (text: string) => number,
): { input_mean: number; output_mean: number } {
  let requests = 0
  let input = 0
  let output = 0
  for (const job of jobs) {
    const preamble = job.preamble.reduce((sum, m) => sum + count(m.content), 0)
    const deltas = job.turns.map((turn) => count(turn.input))
    job.turns.forEach((turn, t) => {
      const history = ancestorsOf(job.turns, t).reduce(
        (sum, a) => sum + (deltas[a] as number) + (job.turns[a]?.output_tokens as number),
        0,
      )
      input += preamble + history + (deltas[t] as number)
      output += turn.output_tokens
      requests++
    })
  }
  return {
    input_mean: Math.round(input / Math.max(1, requests)),
    output_mean: Math.round(output / Math.max(1, requests)),
  }
}

/** What the workers need to run the plan's jobs; undefined for a run without jobs. */
export function jobWork(plan: WorkloadPlan): JobWork | undefined {
  if (plan.jobs === undefined) return undefined
  return plan.structured === undefined
    ? { jobs: plan.jobs }
    : { jobs: plan.jobs, structured: plan.structured }
}
