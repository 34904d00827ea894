import type { JobFigures } from '../metrics/job-figures.js'
import type { LevelSummary } from '../metrics/summarize.js'
import { findSaturation, kneeUndecided } from './saturation.js'
import { type ScalingFigures, signedPercent } from './scaling-step.js'

/** Which figures the job-level knee was read on, in words the result and the report repeat. */
export const JOB_KNEE_FIGURES = 'jobs per hour and JCT p90'

/**
 * A job run's knee read on jobs (--jobs): where more jobs in flight stop adding jobs per hour while
 * job completion time grows. Beside the per-request knee (`saturation`), which is read on tokens per
 * second and TTFT: a fan-out sends several requests per job, so the two need not agree.
 */
export interface JobSaturation {
  /** The figures it was read on (JOB_KNEE_FIGURES). */
  read_on: string
  /** The knee level (jobs in flight); null when the figures place none. */
  value: number | null
  /** `uncertain` when a step beside the knee could be read either way (its bracket holds the knee). */
  confidence: 'clear' | 'uncertain' | null
  bracket: [number, number] | null
  /** Why, in words: the knee's evidence, or why there is none (growth, or steps too noisy to tell). */
  reason: string
}

/** The 95% normal quantile: a Poisson count of n has a half-width of 1.96/√n on the log scale. */
const Z95 = 1.96

/**
 * The job-level knee, by the per-request knee's own rules (findSaturation on the throughput curve;
 * scaling-step.ts): jobs per hour stand for throughput, with their interval (job-figures.ts), and JCT for TTFT, with its order-statistic intervals, so a step between levels of
 * a dozen jobs each is `unclear` rather than a knee. No server gauges: they count requests, not jobs.
 * Null when a level has no job figures (not a job run) or fewer than two levels ran.
 */
/** What the job knee reads of a level. */
export type JobLevel = Pick<LevelSummary, 'value' | 'success_rate' | 'jobs'>

export function findJobSaturation(levels: readonly JobLevel[]): JobSaturation | null {
  if (levels.length < 2 || levels.some((level) => level.jobs === undefined)) return null
  const figures = levels.map((level) => asScaling(level, level.jobs as JobFigures))
  const knee = findSaturation(figures, 'p90')
  if (knee !== null)
    return {
      read_on: JOB_KNEE_FIGURES,
      value: knee.value,
      confidence: knee.confidence ?? 'clear',
      bracket: knee.bracket ?? null,
      reason: inJobWords(knee.reason),
    }
  const undecided = kneeUndecided(figures, 'p90')
  const top = [...levels].sort((a, b) => a.value - b.value).at(-1) as JobLevel
  return {
    read_on: JOB_KNEE_FIGURES,
    value: null,
    confidence: null,
    bracket: null,
    reason:
      undecided === null
        ? `jobs per hour still grew up to ${top.value}: no knee in the levels run`
        : `no clear knee: jobs per hour from ${undecided.from} to ${undecided.to} ${signedPercent(undecided.gain)}${undecided.gain_interval === null ? '' : ` (${signedPercent(undecided.gain_interval[0])}…${signedPercent(undecided.gain_interval[1])})`}, within the noise of ${countsOf(levels, undecided.from, undecided.to)} complete jobs: more jobs per level (a longer --duration) would tell`,
  }
}

/** A level's job figures in the shape the knee's rules read (ScalingFigures). */
function asScaling(level: JobLevel, jobs: JobFigures): ScalingFigures {
  const perHour = jobs.jobs_per_hour ?? 0
  // Older results carry no interval of their own: a Poisson count's, wider than a closed loop's.
  const half = jobs.complete > 0 ? Z95 / Math.sqrt(jobs.complete) : null
  const poisson =
    half === null || !(perHour > 0)
      ? null
      : { low: perHour * Math.exp(-half), high: perHour * Math.exp(half) }
  const interval = jobs.jobs_per_hour_interval === undefined ? poisson : jobs.jobs_per_hour_interval
  return {
    value: level.value,
    output_tokens_per_s: perHour,
    success_rate: level.success_rate,
    ttft_ms: {
      count: jobs.complete,
      mean: null,
      min: null,
      max: null,
      p50: jobs.jct_p50_ms,
      p90: jobs.jct_p90_ms,
    },
    intervals: {
      confidence: 0.95,
      output_tokens_per_s: interval === null ? null : { ...interval, slices: jobs.complete },
      output_tokens_per_s_steady: null,
      ttft_ms: jobs.jct_ms_intervals ?? {},
      tpot_ms: {},
      e2e_ms: {},
    },
  }
}

/** The rules' words are the per-request knee's; here its throughput is jobs per hour and its TTFT the JCT. */
function inJobWords(reason: string): string {
  return reason.replaceAll('throughput', 'jobs per hour').replaceAll('TTFT p90', 'JCT p90')
}

function countsOf(levels: readonly JobLevel[], from: number, to: number): string {
  const count = (value: number) => levels.find((level) => level.value === value)?.jobs?.complete ?? 0
  return `${count(from)} and ${count(to)}`
}

/**
 * "per job (jobs per hour and JCT p90): knee at 3 (uncertain: between 2 and 4): ...", the words the
 * saturation summary closes with in a job run, so which knee was read on which figure is never a guess.
 */
export function describeJobSaturation(job: JobSaturation): string {
  if (job.value === null) return `per job (${job.read_on}): ${job.reason}`
  const between =
    job.confidence === 'uncertain' && job.bracket !== null
      ? ` (uncertain: between ${job.bracket[0]} and ${job.bracket[1]})`
      : ''
  return `per job (${job.read_on}): knee at ${job.value} jobs in flight${between}: ${job.reason}`
}
