import { findSaturation, kneeUndecided, type Saturation } from '../analysis/saturation.js'
import { type Capacity, findCapacity } from '../metrics/slo.js'
import type { LevelFigures, RunSplitMeta } from '../metrics/target-levels.js'

/**
 * Several endpoints or models in one run: each target's own curve and knee (result.targets). A
 * target's levels are its own loads (the streams or rate the split gave it at each of the run's
 * levels), and its knee is looked for on its own throughput curve, by the same rule as the run's.
 * With one model, a target is an endpoint and its levels carry its own server's figures (the scrapes
 * of its own origin), so its server's gauges weigh in as they do for the run's knee; with several
 * models on one server, they count every model's requests, and only the curve places a target's knee.
 */

/** One target's figures at one of the run's levels, cut to what a reader sets beside the run's table. */
export interface TargetLevelRow {
  /** The run's level. */
  level: number
  /** The target's own load there: its streams, or its share of the rate. */
  load: number
  requests: number
  success_rate: number
  ttft_p50_ms: number | null
  ttft_p95_ms: number | null
  tpot_p50_ms: number | null
  output_tokens_per_s: number
  requests_per_s: number
  /** Null without SLOs. */
  slo_met: boolean | null
}

export interface TargetResult {
  /** The endpoint's URL, without credentials. */
  endpoint: string
  model: string
  /** Indexes in the order the endpoints and models were given (what records carry). */
  endpoint_index: number
  model_index: number
  /** The target's share of every level: its weight over all the targets' weights. */
  share: number
  levels: TargetLevelRow[]
  /** The knee on the target's own load; null when none is placed. */
  saturation: Saturation | null
  saturation_summary: string
  /** With SLOs: the highest own load meeting them. */
  capacity: Capacity | null
  /** Most of its requests failed: why, in words ("misconfigured: …", "failed: …"); absent when it answered. */
  failed?: string
}

/** Each target's curve and knee from its figures at every level (figures[level][target], null where it sent nothing). */
export function targetResults(
  split: RunSplitMeta,
  byLevel: readonly { level: number; figures: readonly (LevelFigures | null)[] }[],
  ttftKey: string,
  rateMode: boolean,
): TargetResult[] {
  const weights = split.endpoints.flatMap((e) => split.models.map((m) => e.weight * m.weight))
  const total = weights.reduce((a, b) => a + b, 0)
  return weights.map((weight, t) => {
    const endpoint_index = Math.floor(t / split.models.length)
    const model_index = t % split.models.length
    const rows = byLevel.flatMap(({ level, figures }) => {
      const own = figures[t]
      return own === null || own === undefined ? [] : [{ level, figures: own }]
    })
    // Two run levels can give a target the same streams (level 1 and 2 over two endpoints each
    // give the first one stream): its curve takes the first, so no load appears twice on it.
    const curve: LevelFigures[] = []
    for (const { figures } of rows) if (!curve.some((f) => f.value === figures.value)) curve.push(figures)
    // One model: the target is its endpoint, and its own server's declared slots bound its gauges.
    const slots = split.models.length === 1 ? (split.endpoints[endpoint_index]?.slots ?? null) : null
    // A dead target (hanging, refusing the key, answering 500) is failed, never "not saturated".
    const failed = targetFailure(curve)
    const saturation = failed === null ? findSaturation(curve, ttftKey, rateMode, slots) : null
    const hasSlos = curve.some((figures) => figures.slo !== null)
    return {
      endpoint: split.endpoints[endpoint_index]?.url ?? '',
      model: split.models[model_index]?.id ?? '',
      endpoint_index,
      model_index,
      share: weight / total,
      levels: rows.map(({ level, figures }) => rowOf(level, figures)),
      saturation,
      saturation_summary: failed ?? summaryOf(saturation, curve, ttftKey, rateMode),
      capacity: hasSlos && failed === null ? findCapacity(curve) : null,
      ...(failed === null ? {} : { failed }),
    }
  })
}

/** Below this share of successes over all its levels, a target is judged failed, not measured. */
const FAILED_BELOW = 0.5

/**
 * Why a target's requests failed when most of them did: a failure not caused by load (a refused
 * key, a wrong model) is a misconfiguration; others (timeouts of a hanging server, 5xx) a failure,
 * with the most frequent message and its count. Null when it mostly answered.
 */
function targetFailure(curve: readonly LevelFigures[]): string | null {
  const requests = curve.reduce((sum, level) => sum + level.requests, 0)
  const ok = curve.reduce((sum, level) => sum + level.ok, 0)
  if (requests === 0 || ok >= FAILED_BELOW * requests) return null
  const tally = `${ok} of ${requests} requests succeeded`
  const misconfigured = curve.find((level) => level.misconfiguration != null)?.misconfiguration
  if (misconfigured != null) return `misconfigured: ${tally}; ${misconfigured.message}`
  const messages = new Map<string, number>()
  for (const level of curve)
    for (const { message, count } of level.error_messages ?? [])
      messages.set(message, (messages.get(message) ?? 0) + count)
  const [top] = [...messages.entries()].sort((a, b) => b[1] - a[1])
  return `failed: ${tally}${top === undefined ? '' : `; ${top[1]}× ${top[0]}`}`
}

function rowOf(level: number, figures: LevelFigures): TargetLevelRow {
  return {
    level,
    load: figures.value,
    requests: figures.requests,
    success_rate: figures.success_rate,
    ttft_p50_ms: figures.ttft_ms.p50 ?? null,
    ttft_p95_ms: figures.ttft_ms.p95 ?? null,
    tpot_p50_ms: figures.tpot_ms.p50 ?? null,
    output_tokens_per_s: figures.output_tokens_per_s_steady,
    requests_per_s: figures.requests_per_s,
    slo_met: figures.slo === null ? null : figures.slo.meets,
  }
}

function summaryOf(
  saturation: Saturation | null,
  curve: readonly LevelFigures[],
  ttftKey: string,
  rateMode: boolean,
): string {
  const unit = rateMode ? 'request rate' : 'streams'
  if (saturation !== null) {
    const between =
      saturation.confidence === 'uncertain' && saturation.bracket
        ? ` (uncertain: between ${saturation.bracket[0]} and ${saturation.bracket[1]})`
        : ''
    return `knee at ${unit} ${round(saturation.value)}${between}: ${saturation.reason}`
  }
  if (curve.length < 2)
    return `one load only (${curve.map((f) => round(f.value)).join('')}): no curve to place a knee on`
  const highest = round(Math.max(...curve.map((f) => f.value)))
  const undecided = kneeUndecided(curve, ttftKey, rateMode)
  if (undecided !== null)
    return `no clear knee up to ${highest}: throughput from ${round(undecided.from)} to ${round(undecided.to)} cannot tell growth from a plateau`
  return `not saturated up to ${unit} ${highest}`
}

const round = (value: number): number => Math.round(value * 100) / 100
