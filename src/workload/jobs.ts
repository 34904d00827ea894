import type { ChatMessage } from '../protocols/prompt.js'

/**
 * Agentic jobs: a job is a graph of turns over one conversation. A turn is sent once all its
 * parents have replied and their tool waits have passed; turns whose parents are done run in
 * parallel (a fan-out), and a turn with several parents waits for all of them (a join). As in a
 * session (sessions.ts), only the user side comes from the source: each turn's request carries the
 * replies the server generated in this run along its branch (job-body.ts).
 */

export interface JobTurn {
  /** The user message this turn adds to the history (its delta). */
  input: string
  /** max_tokens of this turn's reply. */
  output_tokens: number
  /** The tool's run time after this turn's reply, before its children may start, ms. */
  tool_wait_ms: number
  /** Indexes of the turns it waits for, each lower than its own (so the graph has no cycle); [] = a root. */
  parents: number[]
}

export interface JobSpec {
  /** The job's id in its source, or `synthetic-N`. */
  id: string
  /** Messages before the first turn (the shared system prompt): the start of every turn's request. */
  preamble: ChatMessage[]
  turns: JobTurn[]
}

export interface JobSet {
  /** Where the jobs came from, in words (result metadata). */
  source: string
  jobs: JobSpec[]
}

/** A job of more turns is refused: a bound on the history one request can carry, as for sessions. */
export const MAX_JOB_TURNS = 64

/** Each turn's depth: 0 for a root, else one more than its deepest parent (the steps before it). */
export function turnDepths(turns: readonly JobTurn[]): number[] {
  const depths: number[] = []
  for (const turn of turns)
    depths.push(turn.parents.reduce((d, p) => Math.max(d, (depths[p] as number) + 1), 0))
  return depths
}

/**
 * The turns whose messages a turn's request carries before its own: every ancestor, in index order
 * (parents always have lower indexes). Along a chain that is the session's history; after a join,
 * the shared trunk, then each branch's turns, so the request starts with its first branch's prefix.
 */
export function ancestorsOf(turns: readonly JobTurn[], index: number): number[] {
  const seen = new Set<number>()
  const stack = [...(turns[index] as JobTurn).parents]
  while (stack.length > 0) {
    const turn = stack.pop() as number
    if (seen.has(turn)) continue
    seen.add(turn)
    stack.push(...(turns[turn] as JobTurn).parents)
  }
  return [...seen].sort((a, b) => a - b)
}

/**
 * The most turns of one job that can be in flight together, as far as its depths tell: the widest
 * depth of the widest job (a fan-out's branches share a depth). A stream needs that many
 * connections, or its parallel turns would queue on one socket and run one after another.
 */
export function parallelTurns(jobs: readonly JobSpec[]): number {
  let widest = 1
  for (const job of jobs) {
    const perDepth = new Map<number, number>()
    for (const depth of turnDepths(job.turns)) perDepth.set(depth, (perDepth.get(depth) ?? 0) + 1)
    widest = Math.max(widest, ...perDepth.values())
  }
  return widest
}
