import { runAdvice } from '../analysis/advice.js'
import { answerOf } from '../analysis/answer.js'
import { type Drift, DriftSamples } from '../analysis/drift.js'
import {
  type FailedTargetLevel,
  failedTargetsNote,
  judgedWithoutFailedTargets,
} from '../analysis/failed-targets.js'
import { describeJobSaturation, findJobSaturation } from '../analysis/job-knee.js'
import { explainKnee } from '../analysis/knee-cause.js'
import { openLoopAdvice } from '../analysis/open-loop.js'
import { type RampResult, RampSamples } from '../analysis/ramp-knee.js'
import { contradictedShortfalls, kneeKeptUp } from '../analysis/rate-knee.js'
import { summarizeRepeats } from '../analysis/repeats.js'
import { misconfiguredAdvice, misconfiguredSummary } from '../analysis/run-gate.js'
import { findSaturation, gainWithInterval, kneeUndecided, type Saturation } from '../analysis/saturation.js'
import { type ScalingStep, stepsFromBelow } from '../analysis/scaling-step.js'
import { type SearchOutcome, searchOutcome, withRecheck } from '../analysis/search.js'
import { kneeContextOf, serverViewOf } from '../analysis/server-view.js'
import { adviceFor, levelVerdict } from '../analysis/verdict.js'
import { requestTimeoutMs } from '../client/request-timeout.js'
import type { LevelClientStats } from '../metrics/client-health.js'
import { round } from '../metrics/distribution.js'
import { unreachableAfterAnswers } from '../metrics/failure-causes.js'
import { levelName } from '../metrics/level-name.js'
import { precisionLine } from '../metrics/precision.js'
import { poolRepeats } from '../metrics/repeat-pool.js'
import { type Capacity, findCapacity, type Slo, toSlos } from '../metrics/slo.js'
import {
  LevelSummarizer,
  type LevelSummary,
  type SummaryOptions,
  type Verdict,
} from '../metrics/summarize.js'
import { type LevelFigures as TargetFigures, TargetLevels } from '../metrics/target-levels.js'
import { priceTokens, tokenTotals } from '../metrics/workload-figures.js'
import type { CapacityModel } from '../model/capacity-model.js'
import { ModelEvidence, type ModelEvidenceSeen } from '../model/evidence.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { RequestRecord } from '../records/types.js'
import { withServerFigures } from '../server-metrics/level-figures.js'
import type { ServerScrape } from '../server-metrics/scrape-file.js'
import { type BenchResult, RESULT_SCHEMA, type RunCost } from './bench-result.js'
import { DEFINITIONS } from './definitions.js'
import type { RunMeta } from './run-meta.js'
import { runModel, soloLevel } from './run-model.js'
import { type ServerSelf, slotsBesideKnee } from './server-self.js'
import { type TargetResult, targetResults } from './target-results.js'

/** The whole summary as a pure function of the records, the server's scrapes and meta: `report` reuses it unchanged. */
export function buildResult(
  records: readonly RequestRecord[],
  meta: RunMeta,
  scrapes: readonly ServerScrape[] = [],
): BenchResult {
  // A level cut short by a crash or a second Ctrl-C has records but no entry in meta: it is shown
  // too, without the client's self-watch (which it never got to write).
  const known = new Set(meta.levels_run.map((level) => level.value))
  const cut = [
    ...new Set(records.filter((r) => r.phase === 'measure' && !known.has(r.level)).map((r) => r.level)),
  ]
  const levels = [
    ...meta.levels_run,
    ...cut.map((value) => ({ value, workers: 0, client: { cpu_percent: 0, loops: [] } })),
  ]
  const totals = { requests: records.length, ...tokenTotals(records) }
  // One pass over the records: each measured one to its level's summary.
  const options = summaryOptions(meta)
  const summarizers = new Map(levels.map((level) => [level.value, new LevelSummarizer(level.value, options)]))
  // The control (phase `control`) is the first level measured again: compared with it, never mixed in.
  const drift = new DriftSamples(levels[0]?.value ?? 0)
  const evidence = new ModelEvidence(soloLevel(meta))
  const targets = meta.split === undefined ? null : new TargetLevels(meta.split, options)
  // --repeat: each run of a level summarized on its own as well (records carry `repeat`).
  const repeats = meta.load.repeat ?? 1
  const runSummarizers = Array.from(
    { length: repeats > 1 ? repeats : 0 },
    () => new Map(levels.map((level) => [level.value, new LevelSummarizer(level.value, options)])),
  )
  // --search: the answer measured again at the end, summarized on its own.
  let recheck: LevelSummarizer | null = null
  const ramp = meta.load.ramp === undefined ? null : new RampSamples()
  for (const record of records) {
    if (record.phase === 'recheck') {
      recheck ??= new LevelSummarizer(record.level, options)
      recheck.add(record)
    }
    if (record.phase === 'measure') {
      summarizers.get(record.level)?.add(record)
      ramp?.add(record)
      targets?.add(record)
      if (record.repeat !== undefined) runSummarizers[record.repeat]?.get(record.level)?.add(record)
    }
    drift.add(record)
    evidence.add(record)
  }
  const summarize = (summarizer: LevelSummarizer, client: LevelClientStats) =>
    withServerFigures(summarizer.result(client), summarizer.window(), scrapes, meta.percentiles)
  // A run of a level with no record (cut before it began) is no run of it.
  const runs = runSummarizers.map((byLevel) =>
    levels.flatMap((level) => {
      const summarizer = byLevel.get(level.value) as LevelSummarizer
      return summarizer.window() === null ? [] : [summarize(summarizer, level.client)]
    }),
  )
  return finishResult(
    levels.map((level) =>
      poolRepeats(
        runs.flatMap((run) => run.filter((figures) => figures.value === level.value)),
        summarize(summarizers.get(level.value) as LevelSummarizer, level.client),
      ),
    ),
    { ...meta, partial: meta.partial || cut.length > 0, totals },
    {
      drift: drift.result(),
      model: evidence.seen(),
      recheck: recheck === null ? null : recheck.result({ cpu_percent: 0, loops: [] }),
      ramp,
      ...(targets === null
        ? {}
        : {
            targets: levels.map(({ value, client }) => ({
              level: value,
              figures: targets.level(value, client, scrapes, meta.percentiles),
            })),
          }),
    },
    runs.filter((run) => run.length > 0),
  )
}

type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/**
 * A search across a server that changed: a degrading server still gave a converged "4 meet, 5 do
 * not" (issue 36). The bracket's levels were measured minutes apart; when the control says the
 * environment moved between them, the answer is said to be uncertain.
 */
function withDrift(outcome: SearchOutcome, drift: Drift | null): SearchOutcome {
  if (drift?.moved !== true) return outcome
  return {
    ...outcome,
    uncertain: drift.reason,
    summary: `${outcome.summary}; uncertain: the server changed during the search (see Drift), re-run it before relying on the answer`,
  }
}

/**
 * The failed targets' figures at each run level, named as the run's summary names them; none when
 * every target failed (the run then has no live evidence to judge on, and its levels say so).
 */
function failedTargetsAt(
  targets: readonly TargetResult[] | undefined,
  byLevel: readonly { level: number; figures: readonly (TargetFigures | null)[] }[] | undefined,
): (level: number) => FailedTargetLevel[] {
  const failed = (targets ?? []).flatMap((target, t) => (target.failed === undefined ? [] : [t]))
  if (targets === undefined || byLevel === undefined || failed.length === targets.length) return () => []
  return (level) => {
    const figures = byLevel.find((entry) => entry.level === level)?.figures ?? []
    return failed.flatMap((t) => {
      const own = figures[t]
      const target = targets[t] as TargetResult
      return own == null ? [] : [{ name: `${target.endpoint} (${target.model})`, figures: own }]
    })
  }
}

/** --ramp: the knee read on the ramp; nothing for steps, or before the ramp's first record. */
function rampField(samples: RampSamples | null, meta: RunMeta, ttftKey: string): { ramp?: RampResult } {
  const plan = meta.load?.ramp
  if (samples === null || plan === undefined) return {}
  const ramp = samples.result(plan, meta.percentiles, ttftKey)
  return ramp === null ? {} : { ramp }
}

/** `model` is left out, not null, where there is none (as `drift` is). */
function modelField(model: CapacityModel | undefined): { model?: CapacityModel } {
  return model === undefined ? {} : { model }
}

/** How levels are summarized, from the run's own meta (so `report` summarizes as `run` did). */
export function summaryOptions(meta: RunMeta): SummaryOptions {
  return {
    percentiles: meta.percentiles,
    timeoutMs: requestTimeoutMs(meta.client),
    slos: toSlos(meta.slo ?? {}),
    // Results written before request-rate mode and pricing existed have neither key.
    mode: meta.load.mode ?? 'concurrency',
    pricing: meta.pricing ?? null,
    shard: meta.shard ?? null,
    protocol: meta.target?.protocol,
    fluidity: meta.fluidity ?? null,
    // The text's requested length is the server's own count of it only once calibrated; otherwise the
    // difference would hold the chat template's tokens too.
    // Audio's tokens would be in the difference too: the images' share is said only without audio.
    images:
      meta.workload?.images !== undefined &&
      meta.workload.audio === undefined &&
      meta.workload.calibration != null &&
      'slope' in meta.workload.calibration,
  }
}

/**
 * The same, from per-level summaries: a run summarizes each level when it ends and drops its records
 * (they are on disk), so memory stays flat over long runs.
 */
export function finishResult(
  figures: readonly LevelFigures[],
  meta: RunMeta,
  /** The control against the first level; what the records showed of the server's prefill and decode (model/evidence.ts). */
  evidence: {
    drift?: Drift | null
    model?: ModelEvidenceSeen | null
    /** --search with SLOs: its answer measured again at the end (records of phase `recheck`). */
    recheck?: LevelFigures | null
    /** Several endpoints or models: each target's figures at each level (metrics/target-levels.ts). */
    targets?: readonly { level: number; figures: readonly (TargetFigures | null)[] }[]
    /** --ramp: the ramp level's records, for the knee read on the ramp. */
    ramp?: RampSamples | null
  } = {},
  /** --repeat: each run's own level summaries (runs[r] = run r's levels); `figures` are then their pooled entries. */
  runs: readonly (readonly LevelFigures[])[] = [],
): BenchResult {
  const drift = evidence.drift ?? null
  const summaries = withPrecision(markInterrupted(unreachableAfterAnswers(figures), meta), meta)
  const ttftKey = meta.percentiles.includes(95) ? 'p95' : 'mean'
  const rateMode = meta.load?.mode === 'request_rate'
  // An interrupted level is shown, never judged: the knee is placed on the levels that ran out.
  const judged = summaries.filter((summary) => summary.interrupted !== true)
  // The slots the server declared are the first endpoint's: with several, the gauges add up past them.
  const slots = (meta.split?.endpoints.length ?? 1) > 1 ? null : (meta.server?.slots ?? null)
  // Request-rate mode: a shortfall a higher rate contradicts is not judged; a knee the server could
  // not keep up with moves below it (analysis/rate-knee.ts).
  const contradicted = rateMode ? contradictedShortfalls(judged) : new Set<number>()
  // A ramp is one level: a knee on steps would be that level by default; its knee is the ramp's.
  const saturation =
    meta.load?.ramp === undefined
      ? runSaturation(judged, meta, drift, { ttftKey, rateMode, slots, contradicted })
      : null
  const ramp = rampField(evidence.ramp ?? null, meta, ttftKey)
  const undecided = saturation === null ? kneeUndecided(judged, ttftKey, rateMode) : null
  const steps = stepsFromBelow(judged, ttftKey, rateMode)
  const targets =
    meta.split === undefined || evidence.targets === undefined
      ? undefined
      : targetResults(meta.split, evidence.targets, ttftKey, rateMode)
  // A level is judged on its live targets: a dead one's failures are the target's, not the load's.
  const failedAt = failedTargetsAt(targets, evidence.targets)
  const levels = judgedLevels(summaries, saturation, steps, {
    ttftKey,
    rateMode,
    undecided,
    contradicted,
    failedAt,
  })
  const hasSlos = Object.keys(meta.slo ?? {}).length > 0
  const misconfigured = misconfiguredSummary(levels, (value) => levelName(meta, value))
  // A job run's knee read on jobs too: a fan-out sends several requests per job, so the two can differ.
  const jobKnee = misconfigured === null ? findJobSaturation(judged) : null
  const requestWords = saturationWords(saturation, levels, meta, { rateMode, undecided, drift, targets })
  const judgement = {
    saturation: misconfigured === null ? saturation : null,
    // A ramp is one level: its knee is read on the ramp, and said instead of "one level only".
    saturation_summary:
      misconfigured ??
      ramp.ramp?.summary ??
      (jobKnee === null
        ? requestWords
        : `per request (output tokens/s and TTFT): ${requestWords}; ${describeJobSaturation(jobKnee)}`),
    ...(jobKnee === null ? {} : { job_saturation: jobKnee }),
    capacity: hasSlos ? findCapacity(levels) : null,
    capacity_summary: hasSlos ? describeCapacity(findCapacity(levels), toSlos(meta.slo ?? {})) : null,
  }
  return {
    schema: RESULT_SCHEMA,
    meta,
    definitions: DEFINITIONS,
    levels,
    ...judgement,
    answer: answerOf({ meta, ...judgement, ...ramp }),
    advice: runAdvice(
      levels,
      misconfigured === null ? saturation : null,
      // Embeddings generate nothing: no advice on output lengths.
      protocolOf(meta.target?.protocol).generatesTokens ? meta.workload.output_tokens : null,
      meta.server ?? null,
    ),
    cost: runCost(levels, meta),
    ...(drift === null ? {} : { drift }),
    ...ramp,
    ...(targets === undefined ? {} : { targets }),
    ...(meta.load?.search === undefined
      ? {}
      : {
          search: withRecheck(
            withDrift(searchOutcome(meta.load.search, meta.load.mode, levels, judgement.saturation), drift),
            evidence.recheck ?? null,
          ),
        }),
    // A partial run (interrupted, or still going) gets no model: it would rest on levels cut short,
    // and its replay was most of the seconds between a Ctrl-C and the exit (issue 36).
    ...modelField(
      meta.partial ? undefined : runModel(levels, meta, saturation?.value ?? null, evidence.model ?? null),
    ),
    ...(runs.length < 2
      ? {}
      : {
          repeats: summarizeRepeats(
            runs.map((levels) => markInterrupted(levels, meta)),
            summaries,
            {
              ttftKey,
              rateMode,
              slots: meta.server?.slots ?? null,
            },
          ),
        }),
  }
}

/** How the run's levels are judged: on which TTFT, in which mode, against which slots. */
interface JudgingOptions {
  ttftKey: 'p95' | 'mean'
  rateMode: boolean
  slots: number | null
  /** Request-rate mode: levels whose shortfall a higher rate contradicts (not judged). */
  contradicted: ReadonlySet<number>
}

/** The knee, with its cause, and uncertain when the curve placed it while the environment drifted. */
function runSaturation(
  judged: readonly LevelFigures[],
  meta: RunMeta,
  drift: Drift | null,
  options: JudgingOptions,
) {
  const { ttftKey, rateMode, slots, contradicted } = options
  const placed = findSaturation(judged, ttftKey, rateMode, slots)
  const found = rateMode ? kneeKeptUp(placed, judged, contradicted) : placed
  return found === null
    ? null
    : {
        ...found,
        cause: explainKnee(judged.map(serverViewOf), found.value, kneeContextOf(judged, meta.server)),
        // A knee the throughput curve placed while the environment drifted may owe its place to the
        // drift; one the server's gauges placed (full_from) does not depend on the server's speed.
        ...(drift?.moved && found.full_from === undefined
          ? { uncertain: drift.reason, confidence: 'uncertain' as const }
          : {}),
      }
}

/** Each level with its verdict and its advice, judged on its live targets. */
function judgedLevels(
  summaries: readonly LevelFigures[],
  saturation: ReturnType<typeof runSaturation>,
  steps: ReturnType<typeof stepsFromBelow>,
  options: Omit<JudgingOptions, 'slots'> & {
    undecided: ReturnType<typeof kneeUndecided>
    failedAt: ReturnType<typeof failedTargetsAt>
  },
): LevelSummary[] {
  const { ttftKey, rateMode, undecided, contradicted, failedAt } = options
  const verdicts = summaries.map((summary) =>
    levelVerdict(
      judgedWithoutFailedTargets(
        contradicted.has(summary.value) ? { ...summary, open_loop: null } : summary,
        failedAt(summary.value),
      ),
      saturation,
      steps.get(summary.value) ?? null,
    ),
  )
  // The lowest overloaded level: a healthy level below it must not advise adding load past it.
  const overloaded = Math.min(
    ...summaries.filter((_, i) => verdicts[i] === 'overloaded').map((summary) => summary.value),
  )
  return summaries.map((summary, i) => {
    const step = steps.get(summary.value) ?? null
    const verdict = verdicts[i] as Verdict
    const advice =
      misconfiguredAdvice({ ...summary, verdict }) ??
      (contradicted.has(summary.value) ? null : openLoopAdvice({ ...summary, verdict })) ??
      adviceFor(verdict, summary, saturation, step, {
        ttftKey,
        undecided,
        adds: rateMode ? 'load' : 'concurrency',
        overloadedAbove: Number.isFinite(overloaded) && overloaded > summary.value ? overloaded : null,
      })
    const theirs = failedTargetsNote(failedAt(summary.value))
    return { ...summary, verdict, advice: theirs === null ? advice : `${advice}; ${theirs}` }
  })
}

/** The saturation line, with what drifted and which targets failed. */
function saturationWords(
  saturation: ReturnType<typeof runSaturation>,
  levels: readonly LevelSummary[],
  meta: RunMeta,
  context: {
    rateMode: boolean
    undecided: ReturnType<typeof kneeUndecided>
    drift: Drift | null
    targets: ReturnType<typeof targetResults> | undefined
  },
): string {
  const { rateMode, undecided, drift, targets } = context
  // The run's levels pool every target: the run's words name a target that failed.
  const failedTargets = (targets ?? []).flatMap((target) =>
    target.failed === undefined ? [] : [`${target.endpoint} (${target.model}) ${target.failed}`],
  )
  return (
    // Several endpoints: the first server's slots are not the run's (each target's line has its own).
    describeSaturation(
      saturation,
      levels,
      rateMode,
      (meta.split?.endpoints.length ?? 1) > 1 ? null : (meta.server ?? null),
      undecided,
    ) +
    (drift?.moved && saturation === null
      ? '; the environment drifted during the run (see Drift): re-run before relying on it'
      : '') +
    (failedTargets.length === 0
      ? ''
      : `; ${failedTargets.length === 1 ? 'a target' : `${failedTargets.length} targets`} failed (the levels' figures include its failures; their verdicts are judged without them): ${failedTargets.join('; ')}`)
  )
}

function runCost(levels: readonly LevelSummary[], meta: RunMeta): RunCost | null {
  const prices = meta.pricing ?? null
  if (prices === null) return null
  const totals = meta.totals
  return {
    currency: prices.currency,
    estimated: meta.estimate?.cost ?? null,
    measured: round(
      levels.reduce((sum, level) => sum + (level.cost?.amount ?? 0), 0),
      6,
    ),
    total: totals === undefined ? null : priceTokens(totals.input_tokens, totals.output_tokens, prices),
  }
}

function describeCapacity(capacity: Capacity | null, slos: readonly Slo[]): string {
  // Each objective's direction is its measure's (measures.ts): at least it where higher is better.
  const objectives = slos
    .map((slo) => `${slo.key} ${slo.better === 'higher' ? '≥' : '≤'} ${slo.threshold}`)
    .join(', ')
  if (capacity === null) return `no level meets the SLOs (${objectives})`
  return `capacity ${capacity.value} under the SLOs (${objectives}): ${capacity.reason}`
}

function describeSaturation(
  saturation: Saturation | null,
  levels: readonly LevelSummary[],
  rateMode: boolean,
  server: ServerSelf | null,
  undecided: ScalingStep | null,
): string {
  const unit = rateMode ? 'request rate' : 'concurrency'
  // Streams can be set beside the server's slots; a request rate cannot.
  const slots = saturation === null || rateMode ? null : slotsBesideKnee(saturation.value, server)
  if (saturation !== null) {
    const between =
      saturation.uncertain !== undefined
        ? ' (uncertain: the environment drifted during the run)'
        : saturation.confidence === 'uncertain' && saturation.bracket
          ? ` (uncertain: between ${saturation.bracket[0]} and ${saturation.bracket[1]})`
          : ''
    return `knee at ${unit} ${saturation.value}${between}: ${saturation.reason}${slots === null ? '' : ` (${slots})`}`
  }
  const judged = levels.filter((level) => level.verdict !== 'interrupted')
  const highest = judged.reduce((max, level) => Math.max(max, level.value), 0)
  if (judged.length < 2) return 'one level only: run a gradient to find the saturation point'
  const overloaded = judged.filter((level) => level.verdict === 'overloaded').map((level) => level.value)
  if (overloaded.length > 0)
    return `no knee from throughput up to ${highest}, but ${plural(overloaded, 'level')} ${overloaded.join(', ')} overloaded: see ${overloaded.length === 1 ? 'its row' : 'their rows'}`
  if (undecided !== null)
    return `no clear knee up to ${highest}: throughput ${gainWithInterval(undecided)} from ${undecided.from} to ${undecided.to} cannot tell growth from a plateau; run more requests per level (or --refine)`
  return `not saturated up to ${highest}: keep adding ${rateMode ? 'load' : 'concurrency'}`
}

function plural(values: readonly number[], noun: string): string {
  return values.length === 1 ? `${noun}` : `${noun}s`
}

/**
 * --precision: each level's account, from meta (the run wrote it there, so `report` draws it
 * again), and where a ceiling left a figure imprecise, a note beside the table saying which.
 */
function withPrecision(summaries: readonly LevelFigures[], meta: RunMeta): LevelFigures[] {
  if (meta.levels_run === undefined) return [...summaries]
  const run = new Map(meta.levels_run.map((level) => [level.value, level.precision]))
  return summaries.map((summary) => {
    const precision = run.get(summary.value)
    if (precision === undefined) return summary
    const short =
      precision.met || precision.stopped_by === 'interrupted' ? [] : [precisionLine('not precise', precision)]
    const notes = [...(summary.notes ?? []), ...short]
    return { ...summary, precision, ...(notes.length > 0 ? { notes } : {}) }
  })
}

/**
 * Levels cut short by an interrupt: those meta marks so, and those with records but no entry in
 * meta at all (cut by a crash or a second Ctrl-C before it was written).
 */
function markInterrupted(summaries: readonly LevelFigures[], meta: RunMeta): LevelFigures[] {
  // A meta that lists no levels at all (made by hand, not by a run) says nothing about cuts.
  if (meta.levels_run === undefined) return [...summaries]
  const run = new Map(meta.levels_run.map((level) => [level.value, level]))
  return summaries.map((summary) => {
    const entry = run.get(summary.value)
    return entry === undefined || entry.interrupted === true ? { ...summary, interrupted: true } : summary
  })
}
