import { describeValue } from '../describe-value.js'
import { isObject, type Json } from '../json-object.js'
import type { ChatMessage } from '../protocols/prompt.js'
import { DatasetError, parseMessage, readText, refuseDeepNesting } from './dataset.js'
import { type JobSet, type JobSpec, type JobTurn, MAX_JOB_TURNS } from './jobs.js'
import { isRolloutLine, rolloutTraceJobs } from './rollout-trace-jobs.js'
import { isSglangAgenticTrace, sglangAgenticJobs } from './sglang-agentic-jobs.js'
import { isTraceLabCsv, isTraceLabLine, traceLabJobs } from './tracelab-jobs.js'

/**
 * llmbench's own job file (docs/workloads.md, "Agentic jobs"): JSONL, one job per line,
 *
 *   {"id": "fix-1", "system": "You are…", "turns": [
 *     {"input": "Find the bug", "output_tokens": 200, "tool_wait_s": 1.5},
 *     {"input_tokens": 300, "output_tokens": 80, "parents": [0]}, …]}
 *
 * A turn gives its delta as text (`input`) or as a length (`input_tokens`, made into exact text by
 * the run's tokenizer); `parents` defaults to the turn before (a chain), [] makes a root. Any
 * mistake refuses the whole file with its path, line and the turn at fault: a job with a broken
 * turn cannot be run in order.
 */

/** Text of an exact token count: the run's ExactPromptSource; distinct ids start differently. */
export interface TextOfLength {
  prompt(id: number, tokens: number): string
}

const JOB_KEYS = ['id', 'system', 'system_tokens', 'turns']
const TURN_KEYS = ['input', 'input_tokens', 'output_tokens', 'tool_wait_s', 'parents']
/** The prompt id of a job file's system prompts: the same text for every job asking the same length. */
const SYSTEM_PROMPT_ID = 0

/**
 * A job file in any format llmbench reads, told apart by its content: SGLang's agentic trace (one
 * JSON document with `conversations`), a rollout trace (JSONL with `out_lens`), a TraceLab trace
 * (its CSV header, or JSONL rounds with `session_id`), else llmbench's own.
 */
export function loadJobFile(
  path: string,
  text: TextOfLength,
  outputTokens: number,
  maxJobs = 10_000,
): JobSet {
  const content = readText(path)
  if (content.trim() === '')
    throw new DatasetError(`job file ${path}: the file is empty; expected one job per line (JSONL)`)
  if (isTraceLabCsv(content)) return traceLabJobs(path, content, text)
  const first = firstValue(content)
  if (isSglangAgenticTrace(first)) return sglangAgenticJobs(path, content, outputTokens)
  if (isRolloutLine(first)) return rolloutTraceJobs(path, content, text)
  if (isTraceLabLine(first)) return traceLabJobs(path, content, text)
  return llmbenchJobs(path, content, text, outputTokens, maxJobs)
}

/** The whole file's value when it is one JSON document, else its first line's; undefined when neither parses. */
function firstValue(content: string): unknown {
  try {
    return JSON.parse(content)
  } catch {
    // JSONL: one value per line.
  }
  try {
    return JSON.parse(content.trimStart().split('\n', 1)[0] as string)
  } catch {
    return undefined
  }
}

function llmbenchJobs(
  path: string,
  content: string,
  text: TextOfLength,
  outputTokens: number,
  maxJobs: number,
): JobSet {
  const jobs: JobSpec[] = []
  const lines = content.split('\n')
  for (let i = 0; i < lines.length && jobs.length < maxJobs; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    const where = `job file ${path}:${i + 1}`
    refuseDeepNesting(path, raw, i + 1)
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (err) {
      throw new DatasetError(`${where}: not valid JSON (${parseMessage(err)}); expected one job per line`)
    }
    const job = readJob(value, i + 1, text, outputTokens)
    if (typeof job === 'string') throw new DatasetError(`${where}: ${job}`)
    jobs.push(job)
  }
  if (jobs.length === 0) throw new DatasetError(`job file ${path}: no jobs`)
  const turns = jobs.reduce((sum, job) => sum + job.turns.length, 0)
  return { source: `${path} (${jobs.length} jobs, ${turns} turns)`, jobs }
}

/** One line as a job, or what is wrong with it. */
function readJob(value: unknown, line: number, text: TextOfLength, outputTokens: number): JobSpec | string {
  if (!isObject(value)) return `expected a job object {"id", "turns": [...]}, got ${describeValue(value)}`
  const unknown = unknownKey(value, JOB_KEYS)
  if (unknown !== null) return unknown
  const id = value.id === undefined ? `job-${line}` : value.id
  if (typeof id !== 'string' && typeof id !== 'number')
    return `"id": expected a string or a number, got ${describeValue(id)}`
  const preamble = readSystem(value, text)
  if (typeof preamble === 'string') return preamble
  const raw = value.turns
  if (!Array.isArray(raw) || raw.length === 0)
    return `"turns": expected a non-empty array of turns, got ${describeValue(raw)}`
  if (raw.length > MAX_JOB_TURNS) return `"turns": ${raw.length} turns; at most ${MAX_JOB_TURNS} per job`
  const turns: JobTurn[] = []
  for (const [t, item] of raw.entries()) {
    const turn = readTurn(item, t, line * MAX_JOB_TURNS + t, text, outputTokens)
    if (typeof turn === 'string') return `turns[${t}]: ${turn}`
    turns.push(turn)
  }
  return { id: String(id), preamble, turns }
}

function readSystem(value: Json, text: TextOfLength): ChatMessage[] | string {
  if (value.system !== undefined && value.system_tokens !== undefined)
    return 'expected "system" (text) or "system_tokens" (a length), not both'
  if (value.system !== undefined) {
    if (typeof value.system !== 'string')
      return `"system": expected a string, got ${describeValue(value.system)}`
    return value.system === '' ? [] : [{ role: 'system', content: value.system }]
  }
  if (value.system_tokens !== undefined) {
    const tokens = value.system_tokens
    if (!isCount(tokens)) return `"system_tokens": expected a whole number >= 0, got ${describeValue(tokens)}`
    return tokens === 0 ? [] : [{ role: 'system', content: text.prompt(SYSTEM_PROMPT_ID, tokens) }]
  }
  return []
}

function readTurn(
  item: unknown,
  index: number,
  promptId: number,
  text: TextOfLength,
  outputTokens: number,
): JobTurn | string {
  if (!isObject(item))
    return `expected {"input" or "input_tokens", "output_tokens", "tool_wait_s", "parents"}, got ${describeValue(item)}`
  const unknown = unknownKey(item, TURN_KEYS)
  if (unknown !== null) return unknown
  let input: string
  if ((item.input === undefined) === (item.input_tokens === undefined))
    return 'expected "input" (text) or "input_tokens" (a length), exactly one of them'
  if (item.input !== undefined) {
    if (typeof item.input !== 'string' || item.input.trim() === '')
      return `"input": expected a non-empty string, got ${describeValue(item.input)}`
    input = item.input
  } else {
    if (!isCount(item.input_tokens) || item.input_tokens === 0)
      return `"input_tokens": expected a whole number >= 1, got ${describeValue(item.input_tokens)}`
    input = text.prompt(promptId, item.input_tokens)
  }
  const output = item.output_tokens ?? outputTokens
  if (!isCount(output) || output === 0)
    return `"output_tokens": expected a whole number >= 1, got ${describeValue(output)}`
  const wait = item.tool_wait_s ?? 0
  if (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0)
    return `"tool_wait_s": expected seconds >= 0, got ${describeValue(wait)}`
  const parents = item.parents ?? (index === 0 ? [] : [index - 1])
  if (!Array.isArray(parents))
    return `"parents": expected an array of earlier turn indexes, got ${describeValue(parents)}`
  for (const parent of parents)
    if (!Number.isSafeInteger(parent) || (parent as number) < 0 || (parent as number) >= index)
      return `"parents": ${describeValue(parent)} is not an earlier turn (expected an index from 0 to ${index - 1}: a turn waits only for turns before it)`
  if (new Set(parents).size !== parents.length)
    return `"parents": ${JSON.stringify(parents)} names a turn twice`
  return { input, output_tokens: output, tool_wait_ms: wait * 1000, parents: parents as number[] }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/** A misspelt key would be silently ignored and the job run differently: name it. */
function unknownKey(value: Json, known: readonly string[]): string | null {
  const extra = Object.keys(value).find((key) => !known.includes(key))
  return extra === undefined
    ? null
    : `unknown key "${extra}"; expected ${known.map((k) => `"${k}"`).join(', ')}`
}
