import { describeValue } from '../describe-value.js'
import { isObject } from '../json-object.js'
import { DatasetError, parseMessage, refuseDeepNesting } from './dataset.js'
import type { TextOfLength } from './job-file.js'
import { type JobSet, type JobSpec, MAX_JOB_TURNS } from './jobs.js'

/**
 * UW SyFI TraceLab's agentic-coding traces (github.com/uw-syfi/TraceLab), in either of its forms:
 *
 * - the canonical multi-round CSV (artifacts/trace_facts/csv_export), header
 *   `id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len`, one row per
 *   round: `input_len` the newly appended tokens, `prefix_len` the reused context, `output_len` the
 *   reply, `tool_wait_after_ms` the tool time before the session's next round;
 * - the normalized round trace (JSONL, one round per line: artifacts/utils/DB_SCHEMA.md), with
 *   `session_id`, `round_index`, `newly_append_tokens`, `prefix_tokens`, `output_tokens` and `tools`,
 *   each tool with `tool_wall_latency_ms` (and `tool_internal_latency_ms`).
 *
 * As jobs: a session is one chain job, its rounds in round order; round 0's prefix becomes the job's
 * system prompt of that length (later prefixes are the history, which the run rebuilds from its own
 * replies); each round sends its appended tokens and asks for its output; the wait after a round is
 * its tool time (the JSONL's tools summed, wall latency as the CSV export takes by default, else the
 * runner's). Lengths become exact text by the run's tokenizer. `arrival_time` is not used: a stream
 * runs one job at a time (the CSV's arrivals are synthetic anyway). A session of more than
 * MAX_JOB_TURNS rounds keeps its first MAX_JOB_TURNS, and the source says how many were cut.
 */

export const TRACELAB_CSV_HEADER =
  'id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len'
/** The prompt ids of the sessions' system prompts: the same text for the same length, as a shared prefix is. */
const PREFIX_PROMPT_ID = 0

interface Round {
  line: number
  session: string
  index: number
  input: number
  output: number
  toolWaitMs: number
  prefix: number
}

/** A CSV whose header is TraceLab's canonical one (the columns may come in any order). */
export function isTraceLabCsv(content: string): boolean {
  const header = content.trimStart().split('\n', 1)[0]?.replace(/\r$/, '') ?? ''
  const columns = new Set(header.split(',').map((c) => c.trim()))
  return TRACELAB_CSV_HEADER.split(',').every((c) => columns.has(c))
}

export function isTraceLabLine(value: unknown): boolean {
  return isObject(value) && value.session_id !== undefined && value.newly_append_tokens !== undefined
}

export function traceLabJobs(path: string, content: string, text: TextOfLength): JobSet {
  const csv = isTraceLabCsv(content)
  const rounds = csv ? csvRounds(path, content) : jsonlRounds(path, content)
  if (rounds.length === 0) throw new DatasetError(`TraceLab trace ${path}: no rounds`)
  const sessions = new Map<string, Round[]>()
  for (const round of rounds) sessions.set(round.session, [...(sessions.get(round.session) ?? []), round])
  let cut = 0
  const jobs: JobSpec[] = [...sessions].map(([session, all]) => {
    // Round order, file order among equal indexes (the trace's own tie-break).
    const ordered = [...all].sort((a, b) => a.index - b.index || a.line - b.line)
    if (ordered.length > MAX_JOB_TURNS) cut++
    const kept = ordered.slice(0, MAX_JOB_TURNS)
    const prefix = (kept[0] as Round).prefix
    return {
      id: session,
      preamble:
        prefix > 0 ? [{ role: 'system' as const, content: text.prompt(PREFIX_PROMPT_ID, prefix) }] : [],
      turns: kept.map((round, t) => ({
        input: text.prompt(round.line * MAX_JOB_TURNS + t + 1, Math.max(1, round.input)),
        output_tokens: Math.max(1, round.output),
        tool_wait_ms: round.toolWaitMs,
        parents: t === 0 ? [] : [t - 1],
      })),
    }
  })
  const turns = jobs.reduce((sum, job) => sum + job.turns.length, 0)
  const cutText = cut === 0 ? '' : `; ${cut} sessions cut to their first ${MAX_JOB_TURNS} rounds`
  return {
    source: `${path} (TraceLab ${csv ? 'CSV' : 'round trace'}: ${jobs.length} sessions as chain jobs, ${turns} turns${cutText})`,
    jobs,
  }
}

function csvRounds(path: string, content: string): Round[] {
  const lines = content.split('\n')
  const headerAt = lines.findIndex((line) => line.trim() !== '')
  const columns = (lines[headerAt] as string)
    .replace(/\r$/, '')
    .split(',')
    .map((c) => c.trim())
  const at = (name: string) => columns.indexOf(name)
  const rounds: Round[] = []
  for (let i = headerAt + 1; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    const where = `TraceLab trace ${path}:${i + 1}`
    const cells = raw.split(',')
    if (cells.length !== columns.length)
      throw new DatasetError(
        `${where}: ${cells.length} cells for ${columns.length} columns (${columns.join(',')})`,
      )
    const cell = (name: string) => (cells[at(name)] as string).trim()
    const session = cell('id')
    if (session === '') throw new DatasetError(`${where}: "id" is empty; expected the session's id`)
    const numbers: Record<string, number> = {}
    for (const name of ['input_len', 'output_len', 'round_idx', 'tool_wait_after_ms', 'prefix_len']) {
      const value = Number(cell(name))
      const whole = name !== 'tool_wait_after_ms'
      if (
        cell(name) === '' ||
        !Number.isFinite(value) ||
        value < 0 ||
        (whole && !Number.isSafeInteger(value))
      )
        throw new DatasetError(
          `${where}: "${name}": expected ${whole ? 'a whole number' : 'a number of ms'} >= 0, got ${JSON.stringify(cell(name))}`,
        )
      numbers[name] = value
    }
    rounds.push({
      line: i + 1,
      session,
      index: numbers.round_idx as number,
      input: numbers.input_len as number,
      output: numbers.output_len as number,
      toolWaitMs: numbers.tool_wait_after_ms as number,
      prefix: numbers.prefix_len as number,
    })
  }
  return rounds
}

function jsonlRounds(path: string, content: string): Round[] {
  const lines = content.split('\n')
  const rounds: Round[] = []
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    const where = `TraceLab trace ${path}:${i + 1}`
    refuseDeepNesting(path, raw, i + 1)
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (err) {
      throw new DatasetError(`${where}: not valid JSON (${parseMessage(err)}); expected one round per line`)
    }
    const round = readRound(value, i + 1)
    if (typeof round === 'string') throw new DatasetError(`${where}: ${round}`)
    rounds.push(round)
  }
  return rounds
}

function readRound(value: unknown, line: number): Round | string {
  if (!isObject(value))
    return `expected a round {"session_id", "round_index", "newly_append_tokens", "prefix_tokens", "output_tokens", "tools"}, got ${describeValue(value)}`
  if (typeof value.session_id !== 'string' || value.session_id === '')
    return `"session_id": expected a non-empty string, got ${describeValue(value.session_id)}`
  for (const key of ['round_index', 'newly_append_tokens', 'output_tokens'])
    if (!isCount(value[key]))
      return `"${key}": expected a whole number >= 0, got ${describeValue(value[key])}`
  const prefix = value.prefix_tokens ?? 0
  if (!isCount(prefix)) return `"prefix_tokens": expected a whole number >= 0, got ${describeValue(prefix)}`
  const tools = value.tools ?? []
  if (!Array.isArray(tools)) return `"tools": expected a list, got ${describeValue(tools)}`
  let wait = 0
  for (const [index, tool] of tools.entries()) {
    if (!isObject(tool)) return `"tools"[${index}]: expected an object, got ${describeValue(tool)}`
    const ms = tool.tool_wall_latency_ms ?? tool.tool_internal_latency_ms ?? null
    // A tool without a latency (the trace's nulls) adds nothing, as the CSV export skips it.
    if (ms === null) continue
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      return `"tools"[${index}]: latency expected a number of ms >= 0, got ${describeValue(ms)}`
    wait += ms
  }
  return {
    line,
    session: value.session_id,
    index: value.round_index as number,
    input: value.newly_append_tokens as number,
    output: value.output_tokens as number,
    toolWaitMs: wait,
    prefix,
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}
