import type { RequestRecord } from '../records/types.js'
import type { Accumulator } from './accumulator.js'
import { Samples } from './accumulator.js'
import { isOk, ttftMs } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { cachedPromptTokens, promptTokens } from './in-band-figures.js'
import { type Interval, percentileInterval } from './intervals.js'
import { ToolTurnCount } from './tool-turn-count.js'

/**
 * A job run's figures over a level (--jobs): what a user of an agent waits for, a whole job, beside
 * what each of its turns cost. Pure functions of the level's measured records, like every figure.
 */
export interface JobFigures {
  /** Jobs whose every turn has a successful measured record. */
  complete: number
  /** Jobs with a measured record but a turn failed or never sent (a failure, the level's end). */
  incomplete: number
  /** Job completion time, ms: the first turn's send to the last turn's end, tool waits included. */
  jct_p50_ms: number | null
  jct_p90_ms: number | null
  /**
   * The 95% order-statistic intervals of jct_p50_ms and jct_p90_ms over the complete jobs, so the
   * job-level knee (analysis/job-knee.ts) tells growth from the noise of a few jobs. Absent in older results.
   */
  jct_ms_intervals?: { p50: Interval; p90: Interval }
  /**
   * The same without tool waits, ms: the job's critical path through its graph, each turn costing
   * its requests' own time (send to end, retries included), so what the server made the job wait.
   */
  jct_without_tools_p50_ms: number | null
  jct_without_tools_p90_ms: number | null
  /** Prompt tokens (as the server counted them) and output tokens per complete job, means. */
  input_tokens_per_job: number | null
  output_tokens_per_job: number | null
  /** Complete jobs per hour of the level's window. */
  jobs_per_hour: number | null
  /**
   * Its 95% interval: a closed loop completes jobs as a renewal process, so the count's relative
   * variance is CV²/n (CV the JCT's coefficient of variation over the n complete jobs), plus 1/n²
   * for the one job more or less the window's edges can cut; on the log scale. Null under 2 jobs;
   * absent in older results.
   */
  jobs_per_hour_interval?: Interval | null
  /** Per turn depth (0 = a job's roots): TTFT and the prompt's cached share, over successful requests. */
  by_depth: JobDepthFigures[]
}

export interface JobDepthFigures {
  depth: number
  requests: number
  ttft_p50_ms: number | null
  ttft_p90_ms: number | null
  /** Cached prompt tokens / prompt tokens over the requests that reported a cache figure; null = none did. */
  cached_share: number | null
  /** --tools: of `requests`, those whose reply called tools (as turns[]'s). Absent in runs without tools. */
  tool_call_turns?: number
}

interface TurnSeen {
  sent_at: number
  end_at: number
  ok: boolean
  parents: number[]
  input: number
  output: number
}

interface JobSeen {
  turns: number
  byTurn: Map<number, TurnSeen>
}

/**
 * The level's jobs as their records tell them, turn by turn: what both the job figures and an SLO
 * on job completion time (slo.ts) read.
 */
export class JobLedger {
  readonly jobs = new Map<string, JobSeen>()

  /** False for a record that is no job's turn. */
  add(record: RequestRecord): boolean {
    if (record.job === undefined || record.turn === undefined) return false
    let job = this.jobs.get(record.job)
    if (job === undefined) {
      job = { turns: record.job_turns ?? 1, byTurn: new Map() }
      this.jobs.set(record.job, job)
    }
    addAttempt(job, record.turn, record)
    return true
  }

  /**
   * Each job's completion time for an SLO, error-adjusted as request SLOs are: a complete job's own;
   * a job with a failed turn counts as the longest a client could wait for it (the request timeout
   * for each of its turns), so a level cannot meet a JCT objective by failing its slow jobs. A job
   * missing turns without a failure (cut by a timed level's window) is left out.
   */
  completionTimesMs(timeoutMs: number): number[] {
    const times: number[] = []
    for (const job of this.jobs.values()) {
      const turns = [...job.byTurn.values()]
      if (turns.some((t) => !t.ok)) times.push(timeoutMs * job.turns)
      else if (turns.length === job.turns) times.push(completionMs(turns))
    }
    return times
  }
}

/** First send to last end, ms. */
function completionMs(turns: readonly TurnSeen[]): number {
  return Math.max(...turns.map((t) => t.end_at)) - Math.min(...turns.map((t) => t.sent_at))
}

/** Fed the level's measured records; null when none is a job's turn. */
export function jobAccumulator(windowSeconds: () => number): Accumulator<JobFigures | null> {
  const ledger = new JobLedger()
  const jobs = ledger.jobs
  const depths = new Map<number, DepthTally>()
  return {
    add(record) {
      if (!ledger.add(record) || !isOk(record)) return
      const depth = record.job_depth ?? 0
      let tally = depths.get(depth)
      if (tally === undefined) {
        tally = new DepthTally()
        depths.set(depth, tally)
      }
      tally.add(record)
    },
    result() {
      if (jobs.size === 0) return null
      return summarizeJobs([...jobs.values()], depths, windowSeconds())
    },
  }
}

/** A turn's retries are one turn to its job: from the first send to the last end, ok if the last attempt was. */
function addAttempt(job: JobSeen, turn: number, record: RequestRecord): void {
  const seen = job.byTurn.get(turn)
  const input = isOk(record) ? (promptTokens(record) ?? 0) : 0
  const output = isOk(record) ? record.output_tokens : 0
  if (seen === undefined) {
    job.byTurn.set(turn, {
      sent_at: record.sent_at,
      end_at: record.end_at,
      ok: isOk(record),
      parents: record.job_parents ?? [],
      input,
      output,
    })
    return
  }
  seen.sent_at = Math.min(seen.sent_at, record.sent_at)
  if (record.end_at >= seen.end_at) {
    seen.end_at = record.end_at
    seen.ok = isOk(record)
  }
  seen.input += input
  seen.output += output
}

function summarizeJobs(jobs: JobSeen[], depths: Map<number, DepthTally>, windowS: number): JobFigures {
  const jct = new Samples()
  const withoutTools = new Samples()
  let complete = 0
  let input = 0
  let output = 0
  for (const job of jobs) {
    const turns = [...job.byTurn.entries()].sort(([a], [b]) => a - b)
    if (turns.length !== job.turns || !turns.every(([, t]) => t.ok)) continue
    complete++
    jct.push(completionMs(turns.map(([, t]) => t)))
    withoutTools.push(criticalPathMs(job))
    for (const [, t] of turns) {
      input += t.input
      output += t.output
    }
  }
  const [jctP50, jctP90] = percentiles(jct)
  const [bareP50, bareP90] = percentiles(withoutTools)
  return {
    complete,
    incomplete: jobs.length - complete,
    jct_p50_ms: jctP50,
    jct_p90_ms: jctP90,
    jct_ms_intervals: jctIntervals(jct),
    jct_without_tools_p50_ms: bareP50,
    jct_without_tools_p90_ms: bareP90,
    input_tokens_per_job: complete === 0 ? null : round(input / complete, 1),
    output_tokens_per_job: complete === 0 ? null : round(output / complete, 1),
    jobs_per_hour: windowS > 0 ? round((complete / windowS) * 3600, 1) : null,
    jobs_per_hour_interval: windowS > 0 ? rateInterval(jct, (complete / windowS) * 3600) : null,
    by_depth: [...depths.keys()].sort((a, b) => a - b).map((d) => (depths.get(d) as DepthTally).figures(d)),
  }
}

/**
 * The longest chain of request times through the job's graph: each turn finishes its own duration
 * after the last of its parents finishes (parents have lower indexes, so one pass in index order).
 */
function criticalPathMs(job: JobSeen): number {
  const finish = new Map<number, number>()
  let longest = 0
  for (const [index, turn] of [...job.byTurn.entries()].sort(([a], [b]) => a - b)) {
    const start = turn.parents.reduce((at, p) => Math.max(at, finish.get(p) ?? 0), 0)
    const end = start + (turn.end_at - turn.sent_at)
    finish.set(index, end)
    longest = Math.max(longest, end)
  }
  return longest
}

/** See JobFigures.jobs_per_hour_interval. */
function rateInterval(jct: Samples, perHour: number): Interval | null {
  const times = jct.copy()
  const n = times.length
  if (n < 2 || !(perHour > 0)) return null
  const mean = times.reduce((sum, t) => sum + t, 0) / n
  const variance = times.reduce((sum, t) => sum + (t - mean) ** 2, 0) / (n - 1)
  const cv2 = mean > 0 ? variance / mean ** 2 : 0
  const half = 1.96 * Math.sqrt(cv2 / n + 1 / n ** 2)
  return { low: round(perHour * Math.exp(-half), 1), high: round(perHour * Math.exp(half), 1) }
}

function jctIntervals(jct: Samples): { p50: Interval; p90: Interval } {
  const sorted = jct.sorted()
  return { p50: percentileInterval(sorted, 50), p90: percentileInterval(sorted, 90) }
}

function percentiles(samples: Samples): [number | null, number | null] {
  const sorted = samples.sorted()
  const at = (p: number): number | null => {
    const value = percentileOfSorted(sorted, p)
    return value === null ? null : round(value)
  }
  return [at(50), at(90)]
}

/** One depth's successful requests. */
class DepthTally {
  requests = 0
  readonly ttfts = new Samples()
  cached = 0
  promptOfCached = 0
  reported = 0
  readonly toolTurns = new ToolTurnCount()

  add(record: RequestRecord): void {
    this.requests++
    this.toolTurns.add(record)
    this.ttfts.pushFigure(ttftMs(record))
    const prompt = promptTokens(record)
    const cached = cachedPromptTokens(record)
    if (cached !== null && prompt !== null && prompt > 0) {
      this.cached += cached
      this.promptOfCached += prompt
      this.reported++
    }
  }

  figures(depth: number): JobDepthFigures {
    const [p50, p90] = percentiles(this.ttfts)
    return {
      depth,
      requests: this.requests,
      ttft_p50_ms: p50,
      ttft_p90_ms: p90,
      cached_share: this.reported === 0 ? null : round(this.cached / this.promptOfCached, 4),
      ...this.toolTurns.figure(),
    }
  }
}
