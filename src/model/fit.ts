import type { Distribution } from '../metrics/distribution.js'
import { CONFIDENCE, studentT } from '../metrics/intervals.js'
import type { InputFigures, OutputFigures } from '../metrics/workload-figures.js'
import type { CapacityModel, CapacityParameters, FittedParameter } from './capacity-model.js'
import type { DecodePoint } from './decode-evidence.js'
import { fitLeastSquares, type LeastSquaresFit } from './least-squares.js'
import { fitLine, type LineFit } from './linear-fit.js'
import type { PrefillPoint } from './prefill-evidence.js'
import { reproduceLevels } from './reproduce.js'

/** What the fit reads of a measured level: a structural slice of a result's level. */
export interface FitLevel {
  value: number
  requests: number
  success_rate: number
  interrupted?: boolean
  verdict?: string
  itl_ms: Distribution
  tpot_ms: Distribution
  achieved_concurrency: { mean: number; max: number }
  output_tokens_per_s: number
  output_tokens_per_s_steady: number
  steady_window: { mean_in_flight: number } | null
  input: InputFigures
  output: OutputFigures
  server?: {
    running: { mean: number; max: number } | null
    waiting: { mean: number; max: number } | null
  } | null
}

export interface FitInput {
  prefill: {
    points: readonly PrefillPoint[]
    source: 'timings' | 'ttft'
    /**
     * Fit the relative error (each point weighted 1/time²) rather than the ms: a designed calibration's
     * prompts span 16 to 766 tokens, and in ms the long ones' noise set the fixed cost a short one pays
     * (124 ms on the kit against 31 ms measured). A run's points, at its few lengths, are fitted in ms.
     */
    relative?: boolean
  }
  /** The decode step at each batch size, over all gaps and over those beside no prefill (evidence.ts). */
  decode: {
    overlap: readonly DecodePoint[]
    stall: readonly DecodePoint[]
    by_context?: { overlap: readonly DecodePoint[]; stall: readonly DecodePoint[] }
  }
  levels: readonly FitLevel[]
  /** Closed loop (concurrency) or open (request_rate): only a closed loop's levels are reproduced. */
  mode: 'concurrency' | 'request_rate'
  /** What the server said of itself (meta.server). */
  server: { engine: string | null; slots: number | null; context_per_slot: number | null } | null
  /** The knee the run found, null when it found none. */
  knee: number | null
  workload: { input_tokens: number; output_tokens: number }
}

/** A level judged on: it ran out, nearly every request succeeded, and the client kept up. */
function usable(level: FitLevel): boolean {
  return (
    level.interrupted !== true &&
    level.success_rate >= 0.99 &&
    level.verdict !== 'client-bound' &&
    level.verdict !== 'misconfigured'
  )
}

const measured = (
  value: number,
  low: number | null,
  high: number | null,
  basis: string,
): FittedParameter => ({
  value,
  low,
  high,
  measured: true,
  basis,
})

const assumed = (value: number, basis: string): FittedParameter => ({
  value,
  low: null,
  high: null,
  measured: false,
  basis,
})

/** A fitted line's intercept or slope as a parameter, clamped at zero (no cost is negative). */
function fromLine(fit: LineFit, part: 'intercept' | 'slope', basis: string): FittedParameter {
  const value = fit[part]
  const interval = part === 'intercept' ? fit.intercept_interval : fit.slope_interval
  const clamp = (x: number | null) => (x === null ? null : Math.max(0, x))
  return measured(Math.max(0, value), clamp(interval.low), clamp(interval.high), basis)
}

/**
 * The capacity model of the server a run measured: each parameter fitted from the run's own records and
 * the server's own figures, or assumed and said so (CapacityModel). Pure; the engine runs only in
 * virtual time (reproduce.ts) to choose how prefills and decoding share the engine.
 */
export function fitCapacity(input: FitInput): CapacityModel {
  const notes: string[] = []
  const levels = input.levels.filter(usable)
  const slots = fitSlots(input, levels)
  const prefill = fitPrefill(
    input.prefill.points,
    input.prefill.source,
    input.workload.input_tokens,
    notes,
    input.prefill.relative === true,
  )
  // Fitted both ways, as whether prefills stall decoding decides which gaps are decode steps alone:
  // on the streamed requests' gaps at each batch size, else on each level's median gap.
  const decodeNotes: [string[], string[]] = [[], []]
  const decode = ([0, 1] as const).map(
    (blocks) =>
      fitDecodeOnRequests(
        blocks === 1 ? input.decode.stall : input.decode.overlap,
        (blocks === 1 ? input.decode.by_context?.stall : input.decode.by_context?.overlap) ?? [],
      ) ?? fitDecode(levels, slots.value, prefill, blocks, decodeNotes[blocks]),
  ) as [DecodeParameters, DecodeParameters]
  const kv = kvCapacity(input.server, slots.value)
  const parameters = (blocks: 0 | 1, basis: string, fitted: boolean): CapacityParameters => ({
    slots,
    ...prefill,
    ...decode[blocks],
    prefill_blocks_decode: fitted ? measured(blocks, null, null, basis) : assumed(blocks, basis),
    kv_cache_tokens: kv,
  })
  const fitted_on = {
    input_tokens: input.workload.input_tokens,
    output_tokens: input.workload.output_tokens,
    levels: input.levels.map((level) => level.value),
  }
  const base = { fitted_on, notes, validity: validityOf(input) }
  if (input.mode !== 'concurrency' || levels.length === 0) {
    // Nothing closed-loop to reproduce: llama.cpp on its CPU is the one engine known to stall decoding.
    const blocks = input.server?.engine === 'llama.cpp' ? 1 : 0
    notes.push(
      ...decodeNotes[blocks],
      'no closed-loop level to reproduce: whether a prefill stalls decoding is assumed from the engine',
    )
    return {
      ...base,
      parameters: parameters(blocks, `assumed from the engine (${input.server?.engine ?? 'unknown'})`, false),
      reproduction: { levels: [], max_error: null },
    }
  }
  // Whether a prefill stalls the decoding streams: whichever reproduces the measured gradient better.
  const tries = ([0, 1] as const).map((blocks) => {
    const params = parameters(blocks, '', true)
    return { blocks, reproduction: reproduceLevels(params, levels) }
  })
  const [overlap, stall] = tries as [(typeof tries)[0], (typeof tries)[0]]
  const best = (stall.reproduction.max_error ?? 1) < (overlap.reproduction.max_error ?? 1) ? stall : overlap
  const other = best === stall ? overlap : stall
  const basis =
    `${best.blocks === 1 ? 'prefills stall decoding' : 'prefills overlap decoding'}: reproduces the measured levels within ` +
    `${percent(best.reproduction.max_error)}, against ${percent(other.reproduction.max_error)} the other way`
  notes.push(...decodeNotes[best.blocks])
  return { ...base, parameters: parameters(best.blocks, basis, true), reproduction: best.reproduction }
}

/** The prompt lengths and contexts per sequence the evidence covered (CapacityModel.validity). */
function validityOf(input: FitInput): NonNullable<CapacityModel['validity']> {
  const range = (values: readonly number[]) =>
    values.length === 0
      ? null
      : { min: Math.round(Math.min(...values)), max: Math.round(Math.max(...values)) }
  const decode = [...input.decode.overlap, ...(input.decode.by_context?.overlap ?? [])]
  return {
    prompt_tokens: range(input.prefill.points.map((point) => point.tokens)),
    context_tokens_per_sequence: range(
      decode.filter((point) => point.contextTokens > 0).map((point) => point.contextTokens / point.batch),
    ),
  }
}

function percent(fraction: number | null): string {
  return fraction === null ? '?' : `${(fraction * 100).toFixed(1)}%`
}

/** The slots: the server's own word, else the most its running gauge showed while requests waited, else the knee. */
function fitSlots(input: FitInput, levels: readonly FitLevel[]): FittedParameter {
  const declared = input.server?.slots ?? null
  if (declared !== null) return measured(declared, declared, declared, 'the server’s own description')
  const full = levels.filter(
    (level) => (level.server?.waiting?.max ?? 0) > 0 && level.server?.running != null,
  )
  if (full.length > 0) {
    const most = Math.max(...full.map((level) => level.server?.running?.max ?? 0))
    return measured(most, most, most, 'the most the server’s running gauge showed while requests waited')
  }
  if (input.mode !== 'concurrency') {
    // Levels are rates here, not streams: the most requests ever in flight is what was seen running.
    const most = Math.max(1, ...input.levels.map((level) => Math.round(level.achieved_concurrency.max)))
    return assumed(most, `the server did not say: at least ${most}, the most requests in flight at once`)
  }
  if (input.knee !== null)
    return assumed(input.knee, 'the knee of the measured gradient (the server did not say)')
  const highest = Math.max(1, ...input.levels.map((level) => level.value))
  return assumed(highest, `no level saturated: at least ${highest}, the highest level run`)
}

type PrefillParameters = Pick<
  CapacityParameters,
  'prefill_base_ms' | 'prefill_ms_per_token' | 'prefill_ms_per_token_sq'
>

/**
 * Prefill time against the prompt tokens computed: a fixed cost, a cost per token and, where three
 * prompt lengths or more let it be tested, a cost per token squared (attention over the prompt). The
 * square is kept only when its 95% interval lies above 0: short prompts alone do not invent curvature,
 * and long ones show the attention cost they pay.
 */
function fitPrefill(
  points: readonly PrefillPoint[],
  source: 'timings' | 'ttft',
  workloadTokens: number,
  notes: string[],
  relative = false,
): PrefillParameters {
  const what =
    source === 'timings'
      ? 'the server’s prompt_ms against prompt_n'
      : 'TTFT at one stream against prompt tokens'
  const lengths = new Set(points.map((point) => point.tokens)).size
  const xs = points.map((point) => point.tokens)
  const ys = points.map((point) => point.ms)
  const weights = relative ? ys.map((y) => 1 / Math.max(1, y) ** 2) : undefined
  const seen = `${points.length} requests at ${lengths} prompt lengths (${Math.min(...xs)}–${Math.max(...xs)} tokens)`
  // Curvature is tested only on three lengths seen twice or more each: one request alone at a length
  // (a single long probe) bends a square term to its own noise (one late probe of 388 tokens on a
  // busy machine gave a linear server 4e-4 ms/token²).
  const quadratic =
    repeatedLengths(xs) >= 3
      ? fitWithoutOutliers(
          xs.map((x) => [1, x, x * x]),
          ys,
          weights,
        )
      : { fit: null, left: 0 }
  const curvature = quadratic.fit?.intervals[2] ?? null
  if (quadratic.fit !== null && curvature !== null && (curvature.low ?? 0) > 0) {
    const basis = `${what}: ${seen}${outliersText(quadratic.left)}, a line and its square${relative ? ', fitted on the relative error' : ''}`
    return {
      prefill_base_ms: fromCoefficient(quadratic.fit, 0, basis),
      prefill_ms_per_token: fromCoefficient(quadratic.fit, 1, basis),
      prefill_ms_per_token_sq: fromCoefficient(quadratic.fit, 2, basis),
    }
  }
  const { fit, left } = fitWithoutOutliers(
    xs.map((x) => [1, x]),
    ys,
    weights,
  )
  if (fit !== null && lengths >= 2) {
    const basis = `${what}: ${seen}${outliersText(left)}`
    const flat =
      curvature === null
        ? {}
        : {
            // No interval: a term the data do not see is not run at its interval's end either.
            prefill_ms_per_token_sq: measured(
              0,
              null,
              null,
              `${what}: ${seen}: a square term’s 95% interval (${show(curvature.low)}…${show(curvature.high)}) includes 0, so none is kept`,
            ),
          }
    return {
      prefill_base_ms: fromCoefficient(fit, 0, basis),
      prefill_ms_per_token: fromCoefficient(fit, 1, basis),
      ...flat,
    }
  }
  if (points.length > 0) {
    const tokens = points[0]?.tokens ?? workloadTokens
    const mean = points.reduce((sum, point) => sum + point.ms, 0) / points.length
    notes.push(
      `prefill was seen at one prompt length (${tokens} tokens): its whole time is charged per token, so predictions at other lengths are extrapolations`,
    )
    return {
      prefill_base_ms: assumed(0, 'one prompt length seen: no fixed cost separated'),
      prefill_ms_per_token: measured(
        mean / tokens,
        null,
        null,
        `${what}: ${points.length} requests at one length`,
      ),
    }
  }
  notes.push(
    'no prefill was seen (no calibration probes and no level of one stream): prefill is assumed free',
  )
  return {
    prefill_base_ms: assumed(0, 'no prefill seen'),
    prefill_ms_per_token: assumed(0, 'no prefill seen'),
  }
}

/** Groups of prompt lengths (each within 10% of the next) holding two points or more. */
function repeatedLengths(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  let groups = 0
  let size = 0
  sorted.forEach((x, i) => {
    const previous = sorted[i - 1]
    if (previous !== undefined && x - previous <= 0.1 * x) size++
    else {
      if (size >= 2) groups++
      size = 1
    }
  })
  return groups + (size >= 2 ? 1 : 0)
}

function outliersText(left: number): string {
  return left > 0 ? ` (${left} far off the fit left out)` : ''
}

function show(value: number | null): string {
  return value === null ? '?' : value.toPrecision(2)
}

/** A least-squares coefficient as a parameter, clamped at zero (no cost is negative). */
function fromCoefficient(fit: LeastSquaresFit, j: number, basis: string): FittedParameter {
  const interval = fit.intervals[j] ?? { low: null, high: null }
  const clamp = (x: number | null) => (x === null ? null : Math.max(0, x))
  return measured(Math.max(0, fit.coefficients[j] ?? 0), clamp(interval.low), clamp(interval.high), basis)
}

/**
 * The least-squares fit, fitted again without the points far off it: further than 4 robust standard
 * deviations (1.4826 × the residuals' median absolute deviation) and 5% of the fit's value. One
 * request the server's loop stalled (a pause, a late timer) is no prefill cost, yet would pull the
 * fixed cost up by its delay over the number of points. `left`: how many were left out.
 */
export function fitWithoutOutliers(
  rows: readonly (readonly number[])[],
  ys: readonly number[],
  weights?: readonly number[],
): { fit: LeastSquaresFit | null; left: number } {
  const fit = fitLeastSquares(rows, ys, weights)
  if (fit === null || rows.length < 5) return { fit, left: 0 }
  const value = (row: readonly number[]) => row.reduce((sum, x, j) => sum + x * (fit.coefficients[j] ?? 0), 0)
  const residuals = rows.map((row, i) => (ys[i] as number) - value(row))
  const center = median(residuals)
  const sigma = 1.4826 * median(residuals.map((r) => Math.abs(r - center)))
  // A point alone at its length (none other within 10%) is never left out: it is the only evidence
  // of the curve there, and dropping the one long prompt let a square term be fitted to the noise of
  // the short ones (a linear server's prefill given 4e-4 ms/token², 33% too slow at 388 tokens).
  const x = (row: readonly number[]) => row[1] ?? 0
  const corroborated = rows.map((row, i) =>
    rows.some((other, j) => j !== i && Math.abs(x(other) - x(row)) <= 0.1 * Math.abs(x(row))),
  )
  const keep = rows.map(
    (row, i) =>
      !corroborated[i] ||
      Math.abs((residuals[i] as number) - center) <= 4 * sigma ||
      Math.abs((residuals[i] as number) - center) <= 0.05 * Math.abs(value(row)),
  )
  const left = keep.filter((kept) => !kept).length
  if (left === 0) return { fit, left }
  const again = fitLeastSquares(
    rows.filter((_, i) => keep[i]),
    ys.filter((_, i) => keep[i]),
    weights?.filter((_, i) => keep[i]),
  )
  return again === null ? { fit, left: 0 } : { fit: again, left }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

type DecodeParameters = Pick<
  CapacityParameters,
  'decode_base_ms' | 'decode_ms_per_seq' | 'decode_ms_per_context_token'
>

/** Batches this far apart at least, or the step's growth with the batch cannot be told from noise. */
const MIN_BATCH_RANGE = 1

/**
 * The decode step against the batch: the middle half's mean token gap at each batch size the streamed requests
 * decoded in (decode-evidence.ts); null when the requests did not stream their tokens or decoded at
 * one batch size only.
 */
function fitDecodeOnRequests(
  points: readonly DecodePoint[],
  byContext: readonly DecodePoint[],
): DecodeParameters | null {
  if (points.length < 2) return null
  const batches = points.map((point) => point.batch)
  if (Math.max(...batches) - Math.min(...batches) < MIN_BATCH_RANGE) return null
  const withContext = fitDecodeWithContext(byContext)
  if (withContext !== null && 'kept' in withContext) return withContext.kept
  // Weighted by the gaps behind each point: a batch size seen seldom is a noisier point.
  const fit = fitLine(
    batches,
    points.map((point) => point.stepMs),
    points.map((point) => point.gaps),
  )
  if (fit === null) return null
  const gaps = points.reduce((sum, point) => sum + point.gaps, 0)
  const basis = `mean of the middle half of the token gaps at each of ${points.length} batch sizes (${gaps} gaps, each against the requests decoding as it began)`
  return {
    decode_base_ms: fromLine(fit, 'intercept', basis),
    decode_ms_per_seq: fromLine(fit, 'slope', basis),
    ...(withContext === null ? {} : { decode_ms_per_context_token: withContext.rejected }),
  }
}

/**
 * How sure the decode fit must be of a context term before it keeps it: 99%, not the 95% of the
 * intervals it reports. A kept term is extrapolated to every longer context a prediction asks for, and
 * one the server does not have costs more there than it ever cost where it was fitted: on a simulator
 * with no context cost, one gradient in a CI run kept 0.0029 ms per token of context (its 95% interval
 * just above 0; ten gradients of the same run under a CPU hog kept none) and predicted 512-token prompts
 * 13–21% slow. The kit's real context terms stay: their 99% intervals lie above 0 too.
 */
const CONTEXT_TERM_CONFIDENCE = 0.99

/**
 * The decode step against the batch and the context it holds (step = base + per_seq × batch +
 * per_context × context tokens), on a point per batch size and context bin; the context term kept
 * only when its 99% interval lies above 0 (CONTEXT_TERM_CONFIDENCE). Null when the points cannot test
 * it (fewer than four, or the context never varied at one batch size: then it is the batch's own shadow).
 */
function fitDecodeWithContext(
  points: readonly DecodePoint[],
): { kept: DecodeParameters } | { rejected: FittedParameter } | null {
  const contexts = new Set(points.map((point) => `${point.batch}:${Math.round(point.contextTokens)}`))
  const batchesSeen = new Set(points.map((point) => point.batch))
  if (points.length < 4 || contexts.size <= batchesSeen.size) return null
  const fit = fitLeastSquares(
    points.map((point) => [1, point.batch, point.contextTokens]),
    points.map((point) => point.stepMs),
    points.map((point) => point.gaps),
  )
  if (fit === null) return null
  const gaps = points.reduce((sum, point) => sum + point.gaps, 0)
  const contextRange = points.map((point) => point.contextTokens)
  const seen = `${points.length} batch sizes and contexts held (${gaps} gaps; ${Math.round(Math.min(...contextRange))}–${Math.round(Math.max(...contextRange))} tokens of context)`
  const interval = strictInterval(fit, 2, CONTEXT_TERM_CONFIDENCE)
  if ((interval.low ?? 0) > 0) {
    const basis = `mean of the middle half of the token gaps at ${seen}, against the batch and the context`
    return {
      kept: {
        decode_base_ms: fromCoefficient(fit, 0, basis),
        decode_ms_per_seq: fromCoefficient(fit, 1, basis),
        decode_ms_per_context_token: fromCoefficient(fit, 2, basis),
      },
    }
  }
  return {
    rejected: measured(
      0,
      null,
      null,
      `token gaps at ${seen}: a context term’s 99% interval (${show(interval.low)}…${show(interval.high)}) includes 0, so none is kept`,
    ),
  }
}

/** A coefficient's interval at `confidence` rather than the fit's 95%: the same centre, its half-width scaled by the t ratio. */
function strictInterval(
  fit: LeastSquaresFit,
  index: number,
  confidence: number,
): { low: number | null; high: number | null } {
  const interval = fit.intervals[index]
  const df = fit.points - fit.coefficients.length
  if (interval?.low == null || interval.high == null || df < 1) return { low: null, high: null }
  const centre = (interval.low + interval.high) / 2
  const half = ((interval.high - interval.low) / 2) * (studentT(df, confidence) / studentT(df, CONFIDENCE))
  return { low: centre - half, high: centre + half }
}

/**
 * The decode step against the batch decoding: one point per level, its median inter-token gap (the
 * step, clear of the odd gap a prefill stalls) against the batch the tokens were decoded in. The
 * requests in a slot are, while the level is steady, the streams in flight capped at the slots (the
 * median gap is a steady figure; the running gauge's mean over the whole level is diluted by its
 * ramp-up and drain, so it serves only a level with no steady window). Where prefills overlap
 * decoding (`blocks` 0), a token sees itself in the batch and each other request in a slot with the
 * share of a request's time spent decoding (the rest it is in prefill, and not in the batch):
 * 1 + (in slots − 1) × that share. Where a prefill stalls decoding (1), no token comes while one
 * runs: every token is decoded with all the requests in a slot.
 */
function fitDecode(
  levels: readonly FitLevel[],
  slots: number,
  prefill: PrefillParameters,
  blocks: 0 | 1,
  notes: string[],
): DecodeParameters {
  const points = levels.flatMap((level) => {
    const step = level.itl_ms.p50 ?? level.tpot_ms.p50 ?? level.tpot_ms.mean
    if (step == null || !(step > 0)) return []
    const inSlots =
      level.steady_window != null
        ? Math.min(level.steady_window.mean_in_flight, slots)
        : (level.server?.running?.mean ?? Math.min(level.achieved_concurrency.mean, slots))
    const inputTokens = level.input.server_mean ?? level.input.requested_mean ?? 0
    const outputTokens = level.output.tokens.mean ?? 1
    const prefillMs = prefill.prefill_base_ms.value + prefill.prefill_ms_per_token.value * inputTokens
    const decodeMs = step * Math.max(0, outputTokens - 1)
    const decodeShare = decodeMs + prefillMs > 0 ? decodeMs / (decodeMs + prefillMs) : 1
    const batch = blocks === 1 || inSlots <= 1 ? inSlots : 1 + (inSlots - 1) * decodeShare
    return [{ batch, step }]
  })
  const fit = fitLine(
    points.map((point) => point.batch),
    points.map((point) => point.step),
  )
  const basis = `median inter-token gap of ${points.length} levels against the batch decoding`
  if (fit !== null) {
    return {
      decode_base_ms: fromLine(fit, 'intercept', basis),
      decode_ms_per_seq: fromLine(fit, 'slope', basis),
    }
  }
  const step = points[0]?.step ?? 0
  notes.push('the decode step was seen at one batch size: its growth with the batch is assumed nil')
  return {
    decode_base_ms:
      points.length > 0
        ? measured(step, null, null, 'median inter-token gap of one level')
        : assumed(0, 'no decode seen'),
    decode_ms_per_seq: assumed(0, 'one batch size seen'),
  }
}

/** llama.cpp says each slot's context: the KV cache holds slots × that. Others are not read yet. */
function kvCapacity(server: FitInput['server'], slots: number): FittedParameter | null {
  const perSlot = server?.context_per_slot ?? null
  if (perSlot === null) return null
  const tokens = perSlot * slots
  return measured(
    tokens,
    tokens,
    tokens,
    `the server’s ${perSlot} tokens of context per slot × ${slots} slots`,
  )
}
