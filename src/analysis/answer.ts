import { type LevelCounting, levelInWords } from '../metrics/level-name.js'
import type { Capacity } from '../metrics/slo.js'
import type { RunSplitMeta } from '../metrics/target-levels.js'
import type { JobSaturation } from './job-knee.js'
import type { Repeats } from './repeats.js'
import type { Saturation } from './saturation.js'
import type { SearchOutcome } from './search.js'

/**
 * The run's answer, in one place: the highest level meeting every SLO when SLOs were set, else the
 * knee. `value` is null when there is neither; `text` is the line the terminal, summary.md and
 * report.html open with ("Capacity: 6 concurrent streams (the knee)").
 */
export interface Answer {
  value: number | null
  from: 'slo' | 'knee' | null
  /** The knee's confidence, when the answer is the knee. */
  confidence?: 'clear' | 'uncertain'
  text: string
}

/** One endpoint's or model's own judgement, as a result's `targets` hold it. */
interface JudgedTarget {
  endpoint: string
  model: string
  endpoint_index: number
  model_index: number
  share: number
  saturation_summary: string
  capacity: Capacity | null
}

/** The fields of a result the answer is read from (a BenchResult has them all). */
interface Judged {
  meta: LevelCounting & { split?: RunSplitMeta }
  saturation: Saturation | null
  saturation_summary: string
  capacity: Capacity | null
  capacity_summary: string | null
  repeats?: Repeats
  search?: SearchOutcome
  targets?: readonly JudgedTarget[]
  /** --ramp: the knee read on the ramp is the run's (it has one level: no knee on steps). */
  ramp?: { saturation: Saturation | null }
  /** --jobs: the knee read on jobs per hour and JCT p90 is the run's (its levels count jobs). */
  job_saturation?: JobSaturation
}

/** From a result's own fields, so a result of an older version answers the same way. */
export function answerOf(result: Judged): Answer {
  const { meta, capacity } = result
  const knee = result.ramp === undefined ? result.saturation : result.ramp.saturation
  const onTheRamp = result.ramp === undefined ? '' : ' on the ramp'
  if (capacity !== null)
    return {
      value: capacity.value,
      from: 'slo',
      text: `Capacity: ${levelInWords(meta, capacity.value)} under the SLOs`,
    }
  if (result.capacity_summary !== null)
    return { value: null, from: null, text: `Capacity: ${result.capacity_summary}` }
  if (result.job_saturation !== undefined) return jobAnswer(result.meta, result.job_saturation, knee)
  if (knee === null) return { value: null, from: null, text: `No knee found: ${result.saturation_summary}` }
  const across = kneeAcrossRuns(result.repeats, knee.value)
  if (across !== null)
    return {
      value: across.value,
      from: 'knee',
      confidence: 'uncertain',
      text: `Capacity: ${levelInWords(meta, across.value)} (${across.words})`,
    }
  const uncertain = knee.confidence === 'uncertain'
  const bracket = knee.bracket ?? null
  const hedge = !uncertain
    ? ''
    : bracket !== null && bracket[0] !== bracket[1]
      ? `, uncertain: between ${bracket[0]} and ${bracket[1]}`
      : ', uncertain'
  return {
    value: knee.value,
    from: 'knee',
    ...(knee.confidence === undefined ? {} : { confidence: knee.confidence }),
    text: `Capacity: ${levelInWords(meta, knee.value)} (the knee${onTheRamp}${hedge})`,
  }
}

/**
 * A job run's answer: the knee of jobs per hour and JCT p90 (a user of jobs sizes for jobs, and its
 * levels count jobs). Where those place none, the knee of the requests, saying that jobs placed none
 * and why (too few jobs per level to tell, or still growing).
 */
function jobAnswer(meta: Judged['meta'], job: JobSaturation, requests: Saturation | null): Answer {
  if (job.value !== null) {
    const uncertain = job.confidence === 'uncertain'
    const hedge = !uncertain
      ? ''
      : job.bracket !== null && job.bracket[0] !== job.bracket[1]
        ? `, uncertain: between ${job.bracket[0]} and ${job.bracket[1]}`
        : ', uncertain'
    return {
      value: job.value,
      from: 'knee',
      confidence: uncertain ? 'uncertain' : 'clear',
      text: `Capacity: ${levelInWords(meta, job.value)} (the knee of jobs per hour and JCT p90${hedge})`,
    }
  }
  if (requests === null) return { value: null, from: null, text: `No knee found: per job, ${job.reason}` }
  return {
    value: requests.value,
    from: 'knee',
    confidence: 'uncertain',
    text: `Capacity: ${levelInWords(meta, requests.value)} (the knee of the requests; per job, ${job.reason})`,
  }
}

/**
 * --repeat whose runs placed the knee apart, or elsewhere than their pooled levels: the headline
 * said "knee 8" when the runs said 6, 6 and 8 (issue 36). The answer is then the knee most runs
 * placed (a tie to the lower level, as the distribution orders them), hedged with the spread; null
 * when every run agrees with the pooled knee.
 */
function kneeAcrossRuns(repeats: Judged['repeats'], pooled: number): { value: number; words: string } | null {
  if (repeats === undefined) return null
  const placed = repeats.knee_distribution.filter((entry) => entry.value !== null)
  const most = placed[0]
  if (most === undefined || most.value === null) return null
  if (repeats.knee_distribution.length === 1 && most.value === pooled) return null
  const values = placed.map((entry) => entry.value as number)
  const low = Math.min(...values, pooled)
  const high = Math.max(...values, pooled)
  const pooledWords = most.value === pooled ? '' : `; the runs pooled place it at ${pooled}`
  return {
    value: most.value,
    words: `the knee in ${most.runs} of ${repeats.count} runs, uncertain: between ${low} and ${high}${pooledWords}`,
  }
}

/**
 * The lines a text report opens with: the answer where there is one to give (a knee or SLOs; without
 * either the saturation line says all there is), the SLO capacity's detail under it, and with
 * --repeat where each run placed its own knee (the pooled knee alone hides a knee that moves).
 */
export function answerLines(result: Judged): {
  headline: string | null
  detail: string | null
  repeats: string | null
  /** --search: what it found, its bracket and its levels. */
  search: string | null
  /** Several endpoints or models: each one's knee (and SLO capacity) on its own load, a line each. */
  targets: string[]
} {
  const answer = answerOf(result)
  const repeats = result.repeats
  return {
    headline: answer.from === null && result.capacity_summary === null ? null : answer.text,
    detail: result.capacity === null ? null : result.capacity_summary,
    repeats: repeats === undefined ? null : `Across ${repeats.count} runs: ${repeats.knee_summary}`,
    search: result.search === undefined ? null : `Search: ${result.search.summary}`,
    targets: (result.targets ?? [])
      .map((target) => {
        const split = result.meta.split
        const name = [
          (split?.endpoints.length ?? 1) > 1 ? target.endpoint : null,
          (split?.models.length ?? 1) > 1 ? target.model : null,
        ]
          .filter((part) => part !== null)
          .join(' · ')
        const capacity =
          target.capacity === null ? '' : `; meets the SLOs up to ${round2(target.capacity.value)}`
        // --paired: each target had the whole level, in its turn (its blocks) or at the same time
        // as the other (--paired-mode together), not a share of it.
        const side = target.model_index + target.endpoint_index === 0 ? 'A' : 'B'
        const share =
          split?.paired !== true
            ? `${Math.round(target.share * 100)}% of each level`
            : split.paired_mode === 'together'
              ? `${side}: the whole level in its blocks, beside ${side === 'A' ? 'B' : 'A'}`
              : `${side}: the whole level in its blocks`
        return `${name} (${share}): ${target.saturation_summary}${capacity}`
      })
      .concat(
        result.meta.split?.paired === true
          ? [
              result.meta.split.paired_mode === 'together'
                ? 'paired run: A and B loaded together in blocks of each level, one client driving both; `llmbench compare DIR` judges B against A pair by pair'
                : 'paired run: A and B took turns in blocks of each level; `llmbench compare DIR` judges B against A pair by pair',
            ]
          : [],
      ),
  }
}

const round2 = (value: number): number => Math.round(value * 100) / 100
