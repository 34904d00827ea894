import { percentileOfSorted } from '../metrics/distribution.js'
import { levelName } from '../metrics/level-name.js'
import type { RequestRecord } from '../records/types.js'
import type { BenchResult } from '../result/bench-result.js'

/** One turn of a drawn job: ms from the job's first send; its row is its branch. */
export interface JobTurnBar {
  turn: number
  row: number
  sent: number
  first_token: number | null
  end: number
  outcome: 'ok' | 'failed'
  /** The tool wait after this turn's reply (what the gap before its children holds), ms. */
  tool_wait_ms: number
}

/** One job drawn turn by turn: which one it is (the level's median or p90 by completion time). */
export interface JobTimeline {
  level: number
  level_name: string
  knee: boolean
  /** 'p50' for the typical job, 'p90' for the slow one. */
  rank: 'p50' | 'p90'
  job: string
  jct_ms: number
  /** Complete jobs the rank was read over. */
  jobs: number
  rows: number
  turns: JobTurnBar[]
}

interface TurnSeen {
  turn: number
  sent_at: number
  end_at: number
  first_token_at: number | null
  ok: boolean
  parents: number[]
  tool_wait_ms: number
}

/**
 * A slow (p90 completion time) and a typical (median) job of one level, each turn a bar from its
 * send to its last token (a pure function). The level drawn is the knee's when there is one (where a
 * job's waits grow), else the highest level run. Only complete jobs are ranked (a cut job's time is
 * not its completion time); nothing when the run had no job.
 */
export function jobTimelines(result: BenchResult, records: readonly RequestRecord[]): JobTimeline[] {
  const levels = result.levels.filter((level) => level.jobs !== undefined && level.jobs.complete > 0)
  if (levels.length === 0) return []
  const knee = result.saturation?.value ?? null
  const drawn =
    levels.find((level) => level.value === knee) ?? levels.reduce((a, b) => (b.value > a.value ? b : a))
  const jobs = completeJobs(records.filter((r) => r.level === drawn.value && r.phase === 'measure'))
  if (jobs.length === 0) return []
  jobs.sort((a, b) => a.jct - b.jct)
  const sortedJct = jobs.map((job) => job.jct)
  const pick = (p: number): (typeof jobs)[number] => {
    // The real job whose completion time is nearest the level's percentile (as job-figures.ts reads it).
    const target = percentileOfSorted(sortedJct, p) ?? 0
    return jobs.reduce((best, job) => (Math.abs(job.jct - target) < Math.abs(best.jct - target) ? job : best))
  }
  return (['p90', 'p50'] as const).map((rank) => {
    const job = pick(rank === 'p90' ? 90 : 50)
    const origin = Math.min(...job.turns.map((t) => t.sent_at))
    const ms = (at: number): number => Math.round((at - origin) * 10) / 10
    const rows = branchRows(job.turns)
    return {
      level: drawn.value,
      level_name: levelName(result.meta, drawn.value),
      knee: drawn.value === knee,
      rank,
      job: job.id,
      jct_ms: Math.round(job.jct * 10) / 10,
      jobs: jobs.length,
      rows: Math.max(...rows) + 1,
      turns: job.turns.map((t, index) => ({
        turn: t.turn,
        row: rows[index] as number,
        sent: ms(t.sent_at),
        first_token: t.first_token_at === null ? null : ms(t.first_token_at),
        end: ms(t.end_at),
        outcome: t.ok ? 'ok' : 'failed',
        tool_wait_ms: t.tool_wait_ms,
      })),
    }
  })
}

/** The level's jobs with every turn answered, each turn's retries folded into one (first send, last end). */
function completeJobs(records: readonly RequestRecord[]): { id: string; jct: number; turns: TurnSeen[] }[] {
  const byJob = new Map<string, { total: number; turns: Map<number, TurnSeen> }>()
  for (const record of records) {
    if (record.job === undefined || record.turn === undefined) continue
    let job = byJob.get(record.job)
    if (job === undefined) {
      job = { total: record.job_turns ?? 1, turns: new Map() }
      byJob.set(record.job, job)
    }
    const ok = record.error === null
    const seen = job.turns.get(record.turn)
    if (seen === undefined) {
      job.turns.set(record.turn, {
        turn: record.turn,
        sent_at: record.sent_at,
        end_at: record.end_at,
        first_token_at: record.first_token_at,
        ok,
        parents: record.job_parents ?? [],
        tool_wait_ms: record.tool_wait_ms ?? 0,
      })
    } else {
      seen.sent_at = Math.min(seen.sent_at, record.sent_at)
      if (record.end_at >= seen.end_at) {
        seen.end_at = record.end_at
        seen.first_token_at = record.first_token_at
        seen.ok = ok
      }
    }
  }
  return [...byJob.entries()].flatMap(([id, job]) => {
    const turns = [...job.turns.values()].sort((a, b) => a.turn - b.turn)
    if (turns.length !== job.total || !turns.every((t) => t.ok)) return []
    const jct = Math.max(...turns.map((t) => t.end_at)) - Math.min(...turns.map((t) => t.sent_at))
    return [{ id, jct, turns }]
  })
}

/**
 * Each turn's row, so a chain stays on one row and a fan-out's branches get their own: a turn
 * continues the row of its first parent no other child has continued yet, else opens a new row
 * (a root, a second branch). A join continues one of its branches.
 */
export function branchRows(turns: readonly { turn: number; parents: readonly number[] }[]): number[] {
  const rowOfTurn = new Map<number, number>()
  const continued = new Set<number>()
  let next = 0
  return turns.map((turn) => {
    const parent = turn.parents.find((p) => rowOfTurn.has(p) && !continued.has(p))
    let row: number
    if (parent === undefined) row = next++
    else {
      continued.add(parent)
      row = rowOfTurn.get(parent) as number
    }
    rowOfTurn.set(turn.turn, row)
    return row
  })
}
