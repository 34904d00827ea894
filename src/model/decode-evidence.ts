import { isOk } from '../metrics/derive.js'
import type { RequestRecord } from '../records/types.js'

/** The decode step seen at one batch size: the middle half's mean token gap while that many requests decoded. */
export interface DecodePoint {
  batch: number
  stepMs: number
  /** Gaps it is over. */
  gaps: number
  /** Mean tokens of context (prompt + tokens so far) the decoding requests held during those gaps. */
  contextTokens: number
}

/** Gaps sampled from each request, spread over its stream: enough to see every batch it passed through. */
const GAPS_PER_REQUEST = 16
/** Requests per level whose gaps are sampled (every request's decode window counts in the batch). */
const SAMPLED_REQUESTS_PER_LEVEL = 4000
/** A batch size seen in fewer gaps than this gives no point: its step would be noise. */
const MIN_GAPS_PER_BATCH = 20

interface LevelDecode {
  /** Every measured request's decode window, first to last token (run clock ms). */
  from: number[]
  to: number[]
  /** Every request's prefill as the server timed it (NaN where it did not) and its prompt tokens computed. */
  prefillMs: number[]
  promptTokens: number[]
  /** Every request's tokens streamed. */
  outputTokens: number[]
  /** Sampled gaps: when each began and how long it was. */
  gapAt: number[]
  gapMs: number[]
  sampled: number
  /** What every call of points() reads of each sampled gap, until the level's next record (null: to read). */
  seen: SeenGaps | null
}

/** Each sampled gap's batch (the level's requests decoding when it began) and the context they held then. */
interface SeenGaps {
  batch: Int32Array
  context: Float64Array
}

/** A context bin's key beside its batch size's: batch × this + bin (bins are 2·log2 of tokens per sequence, far below it). */
const CONTEXT_BIN_KEYS = 4096

/**
 * The decode evidence of a run, fed record by record: each streamed request's decode window and a
 * sample of its token gaps. At the end, each sampled gap is set against the number of the level's
 * requests decoding when it began (on the client's own timeline, itself included): the engine took
 * that gap's step at that batch. The middle half of the gaps per batch size passes over the odd gap a prefill
 * stalled (and, for an engine whose prefills stall decoding, the gaps beside a prefill are left out);
 * one point per batch size seen, so the step's growth with the batch is read at every
 * batch the levels passed through, not at one mean per level (a level at c=4 decodes at 3 and at 4).
 */
export class DecodeEvidence {
  private readonly byLevel = new Map<number, LevelDecode>()

  add(record: RequestRecord): void {
    if (record.phase !== 'measure' || !isOk(record) || record.attempt > 1) return
    const times = record.token_times
    if (times.length < 3) return
    let level = this.byLevel.get(record.level)
    if (level === undefined) {
      level = {
        from: [],
        to: [],
        prefillMs: [],
        promptTokens: [],
        outputTokens: [],
        gapAt: [],
        gapMs: [],
        sampled: 0,
        seen: null,
      }
      this.byLevel.set(record.level, level)
    }
    level.seen = null
    level.from.push(times[0] as number)
    level.to.push(times[times.length - 1] as number)
    const timings = record.server_timings ?? null
    level.prefillMs.push(timings?.prompt_ms ?? Number.NaN)
    level.promptTokens.push(timings?.prompt_n ?? record.input_tokens ?? 0)
    level.outputTokens.push(times.length)
    if (level.sampled >= SAMPLED_REQUESTS_PER_LEVEL) return
    level.sampled++
    const gaps = times.length - 1
    const every = Math.max(1, Math.floor(gaps / GAPS_PER_REQUEST))
    for (let i = 1; i <= gaps; i += every) {
      level.gapAt.push(times[i - 1] as number)
      level.gapMs.push((times[i] as number) - (times[i - 1] as number))
    }
  }

  /**
   * A point per batch size seen often enough: the mean of its middle half of gaps. With `prefillMsOf` (the fitted prefill
   * time of a prompt, used where the server did not time it), only the gaps during which no request
   * of the level was in its prefill: where a prefill stalls decoding, those are the decode steps alone.
   */
  points(
    prefillMsOf: ((promptTokens: number) => number) | null = null,
    /** One point per batch size and context held (half-octave bins of context per sequence), not per batch size alone. */
    byContext = false,
  ): DecodePoint[] {
    const bins = new Map<number, { batch: number; gaps: number[]; context: number }>()
    for (const level of this.byLevel.values()) {
      // The same for every call: a run's result is drawn after every level and at its end.
      level.seen ??= seenGaps(level)
      const { batch: batches, context: contexts } = level.seen
      const prefilling = prefillMsOf === null ? null : prefillCurve(level, prefillMsOf)
      for (let i = 0; i < batches.length; i++) {
        const batch = batches[i] as number
        if (batch < 1) continue
        if (prefilling !== null) {
          const at = level.gapAt[i] as number
          const during = countAt(prefilling, at)
          if (during.count > 0 || during.nextChange < at + (level.gapMs[i] as number)) continue
        }
        const context = contexts[i] as number
        const key = byContext
          ? batch * CONTEXT_BIN_KEYS + Math.round(2 * Math.log2(Math.max(1, context / batch)))
          : batch
        const gap = level.gapMs[i] as number
        const bin = bins.get(key)
        if (bin === undefined) bins.set(key, { batch, gaps: [gap], context })
        else {
          bin.gaps.push(gap)
          bin.context += context
        }
      }
    }
    return [...bins.values()]
      .filter((bin) => bin.gaps.length >= MIN_GAPS_PER_BATCH)
      .sort((a, b) => a.batch - b.batch || a.context / a.gaps.length - b.context / b.gaps.length)
      .map((bin) => ({
        batch: bin.batch,
        stepMs: interquartileMean(bin.gaps),
        gaps: bin.gaps.length,
        contextTokens: bin.context / bin.gaps.length,
      }))
  }
}

function seenGaps(level: LevelDecode): SeenGaps {
  const decoding = stepCurve(level.from, level.to)
  const held = contextCurve(level)
  const seen = { batch: new Int32Array(level.gapAt.length), context: new Float64Array(level.gapAt.length) }
  level.gapAt.forEach((at, i) => {
    seen.batch[i] = countAt(decoding, at).count
    seen.context[i] = contextAt(held, at)
  })
  return seen
}

/** Each request's prefill, ending at its first token: as the server timed it, else as fitted. */
function prefillCurve(level: LevelDecode, prefillMsOf: (promptTokens: number) => number): StepCurve {
  const ends = level.from
  const starts = ends.map((end, i) => {
    const timed = level.prefillMs[i] as number
    return end - (Number.isNaN(timed) ? prefillMsOf(level.promptTokens[i] as number) : timed)
  })
  return stepCurve(starts, ends)
}

/**
 * The context the level's decoding requests held at each moment: each request, while it decodes,
 * holds its prompt and the tokens streamed so far, which grow linearly over its window. So the sum is
 * piecewise linear, a + b × t between changes: a step curve of (a, b), summed over the windows open.
 */
interface ContextCurve {
  at: Float64Array
  a: Float64Array
  b: Float64Array
}

function contextCurve(level: LevelDecode): ContextCurve {
  const edges = level.from.flatMap((from, i) => {
    const to = level.to[i] as number
    const rate = to > from ? (level.outputTokens[i] as number) / (to - from) : 0
    const a = (level.promptTokens[i] as number) - rate * from
    return [
      { at: from, a, b: rate },
      { at: to, a: -a, b: -rate },
    ]
  })
  edges.sort((x, y) => x.at - y.at || y.b - x.b)
  const curve = {
    at: new Float64Array(edges.length),
    a: new Float64Array(edges.length),
    b: new Float64Array(edges.length),
  }
  let a = 0
  let b = 0
  edges.forEach((edge, i) => {
    a += edge.a
    b += edge.b
    curve.at[i] = edge.at
    curve.a[i] = a
    curve.b[i] = b
  })
  return curve
}

function contextAt(curve: ContextCurve, t: number): number {
  const i = lastAtOrBefore(curve.at, t)
  return i < 0 ? 0 : Math.max(0, (curve.a[i] as number) + (curve.b[i] as number) * t)
}

/**
 * The mean of the middle half: as robust as the median to the odd stalled gap, and not stepped by
 * timers that fire on whole milliseconds (a median of gaps of 11, 12 and 13 ms jumps a whole ms, 8%).
 */
function interquartileMean(values: number[]): number {
  const sorted = Float64Array.from(values).sort()
  const from = Math.floor(sorted.length / 4)
  const to = Math.max(from + 1, sorted.length - from)
  let sum = 0
  for (let i = from; i < to; i++) sum += sorted[i] as number
  return sum / (to - from)
}

/** A count of open windows as a step function: the times it changes, and the count from each on. */
interface StepCurve {
  at: Float64Array
  count: Int32Array
}

function stepCurve(from: readonly number[], to: readonly number[]): StepCurve {
  const edges = [...from.map((at) => ({ at, change: 1 })), ...to.map((at) => ({ at, change: -1 }))].sort(
    (a, b) => a.at - b.at || b.change - a.change,
  )
  const curve = { at: new Float64Array(edges.length), count: new Int32Array(edges.length) }
  let count = 0
  edges.forEach((edge, i) => {
    count += edge.change
    curve.at[i] = edge.at
    curve.count[i] = count
  })
  return curve
}

/** The count at `t` (after the last change at or before it) and when it next changes. */
function countAt(curve: StepCurve, t: number): { count: number; nextChange: number } {
  const low = lastAtOrBefore(curve.at, t)
  if (low < 0) return { count: 0, nextChange: curve.at[0] ?? Number.POSITIVE_INFINITY }
  return { count: curve.count[low] as number, nextChange: curve.at[low + 1] ?? Number.POSITIVE_INFINITY }
}

/** The index of the last change at or before `t`; -1 when none. */
function lastAtOrBefore(at: Float64Array, t: number): number {
  const n = at.length
  if (n === 0 || t < (at[0] as number)) return -1
  let low = 0
  let high = n - 1
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if ((at[mid] as number) <= t) low = mid
    else high = mid - 1
  }
  return low
}
