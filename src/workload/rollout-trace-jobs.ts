import { describeValue } from '../describe-value.js'
import { isObject } from '../json-object.js'
import { DatasetError, parseMessage, refuseDeepNesting } from './dataset.js'
import type { TextOfLength } from './job-file.js'
import { type JobSet, type JobSpec, type JobTurn, MAX_JOB_TURNS } from './jobs.js'

/**
 * Rollout traces as vLLM's TPU inference agentic benchmark replays them (vllm-project/tpu-inference
 * pull request 3365, benchmark_agentic.py --trace-file): JSONL, one trajectory per line,
 *
 *   {"group": 0, "stream": 0, "prompt_len": 7570, "out_lens": [399, 65, 57], "obs_lens": [23, 942, 2126]}
 *
 * `group` is the problem: its streams share one initial prompt (the first stream's `prompt_len`);
 * `stream` the generation within the group; `out_lens` the assistant tokens of each turn; `obs_lens`
 * the observation (tool output) tokens that follow each turn. As a job: a group is one job whose
 * streams run in parallel (an RL rollout step waits for its whole group), each stream a chain whose
 * first turn sends the group's prompt and whose turn i > 0 sends observation i-1; an observation
 * after the last turn is never answered, so it is not sent. The trace holds no times: tool waits are 0.
 */

/** Streams × turns of one group at most: a group is one job, and its turns are held per job. */
const MAX_GROUP_TURNS = 1024
/** Prompt ids of the groups' shared prompts: far above the per-line ids, so no delta starts the same. */
const GROUP_PROMPT_BASE = 1_000_000_000

interface Trajectory {
  line: number
  group: string
  stream: number
  promptLen: number
  outLens: number[]
  obsLens: number[]
}

export function isRolloutLine(value: unknown): boolean {
  return isObject(value) && value.out_lens !== undefined && value.prompt_len !== undefined
}

export function rolloutTraceJobs(path: string, content: string, text: TextOfLength): JobSet {
  const trajectories: Trajectory[] = []
  const lines = content.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    const where = `rollout trace ${path}:${i + 1}`
    refuseDeepNesting(path, raw, i + 1)
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (err) {
      throw new DatasetError(
        `${where}: not valid JSON (${parseMessage(err)}); expected one trajectory per line`,
      )
    }
    const trajectory = readTrajectory(value, i + 1)
    if (typeof trajectory === 'string') throw new DatasetError(`${where}: ${trajectory}`)
    trajectories.push(trajectory)
  }
  if (trajectories.length === 0) throw new DatasetError(`rollout trace ${path}: no trajectories`)
  const groups = new Map<string, Trajectory[]>()
  for (const t of trajectories) groups.set(t.group, [...(groups.get(t.group) ?? []), t])
  const jobs: JobSpec[] = []
  let groupIndex = 0
  for (const [group, members] of groups) {
    members.sort((a, b) => a.stream - b.stream)
    const first = members[0] as Trajectory
    const turnsInGroup = members.reduce((sum, m) => sum + m.outLens.length, 0)
    if (turnsInGroup > MAX_GROUP_TURNS)
      throw new DatasetError(
        `rollout trace ${path}:${first.line}: group ${group} has ${turnsInGroup} turns over its streams; at most ${MAX_GROUP_TURNS}`,
      )
    // The group's prompt is one text for all its streams: the prefix they share, as in the trace.
    const prompt = text.prompt(GROUP_PROMPT_BASE + groupIndex++, first.promptLen)
    const turns: JobTurn[] = []
    for (const member of members) {
      member.outLens.forEach((out, t) => {
        turns.push({
          input:
            t === 0
              ? prompt
              : text.prompt(member.line * MAX_JOB_TURNS + t, Math.max(1, member.obsLens[t - 1] ?? 1)),
          output_tokens: out,
          tool_wait_ms: 0,
          parents: t === 0 ? [] : [turns.length - 1],
        })
      })
    }
    jobs.push({ id: `group-${group}`, preamble: [], turns })
  }
  const turns = jobs.reduce((sum, job) => sum + job.turns.length, 0)
  return {
    source: `${path} (rollout trace: ${jobs.length} groups as jobs, ${trajectories.length} streams, ${turns} turns)`,
    jobs,
  }
}

function readTrajectory(value: unknown, line: number): Trajectory | string {
  if (!isObject(value))
    return `expected {"group", "stream", "prompt_len", "out_lens", "obs_lens"}, got ${describeValue(value)}`
  const group = value.group
  if (typeof group !== 'number' && typeof group !== 'string')
    return `"group": expected a number or a string, got ${describeValue(group)}`
  const stream = value.stream ?? 0
  if (!isCount(stream)) return `"stream": expected a whole number >= 0, got ${describeValue(stream)}`
  if (!isCount(value.prompt_len) || value.prompt_len === 0)
    return `"prompt_len": expected a whole number >= 1, got ${describeValue(value.prompt_len)}`
  const outLens = value.out_lens
  if (!Array.isArray(outLens) || outLens.length === 0 || !outLens.every((n) => isCount(n) && n > 0))
    return `"out_lens": expected a non-empty array of whole numbers >= 1, got ${describeValue(outLens)}`
  if (outLens.length > MAX_JOB_TURNS)
    return `"out_lens": ${outLens.length} turns; at most ${MAX_JOB_TURNS} per stream`
  const obsLens = value.obs_lens ?? []
  if (!Array.isArray(obsLens) || !obsLens.every(isCount))
    return `"obs_lens": expected an array of whole numbers >= 0, got ${describeValue(obsLens)}`
  if (obsLens.length < outLens.length - 1)
    return `"obs_lens": ${obsLens.length} observations for ${outLens.length} turns; expected at least one before each turn after the first`
  return {
    line,
    group: String(group),
    stream,
    promptLen: value.prompt_len,
    outLens: outLens as number[],
    obsLens: obsLens as number[],
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}
