/**
 * The designed calibration of `llmbench model --calibrate` (issue 39): the few loads that identify
 * every parameter of the capacity model, chosen to fit a stated time budget. Pure: the points and
 * their estimated time, from the server's slots and context and a first look at its speed.
 *
 * - prefill: one request at a time over prompt lengths spread geometrically from short to three
 *   quarters of a slot's context (at least half, as the issue asks), each length seen two or three
 *   times so a square term can be tested (fit.ts tests curvature only on repeated lengths);
 * - decode: closed loops at batch sizes 1..slots (six sizes at most, spread geometrically) at two
 *   prompt lengths, short and half the context, so the step's growth with the batch and with the
 *   context held can be told apart;
 * - slots: one wave of more streams than the slots, run first (calibration-slots.ts reads the limit).
 */

/** What a point identifies. */
export type CalibrationPurpose = 'slots' | 'prefill' | 'decode'

export interface CalibrationPoint {
  purpose: CalibrationPurpose
  /** Streams kept in flight (a closed loop). */
  concurrency: number
  /** Requests in all. */
  requests: number
  /** Prompt tokens as the server counts them. */
  inputTokens: number
  /** max_tokens, with ignore_eos so every request decodes that many. */
  outputTokens: number
  /** Estimated seconds it takes. */
  estimatedS: number
}

/** The server's speed as first seen: enough to estimate a point's time, not to fit. */
export interface CalibrationSpeed {
  /** Prefill, ms: a fixed part and a part per prompt token. */
  prefillBaseMs: number
  prefillMsPerToken: number
  /** A decode step at a full batch, ms: an upper bound of every smaller batch's. */
  fullStepMs: number
}

export interface DesignInput {
  budgetS: number
  /** Seconds already spent (reading the server, the slot probe): the design fits the rest. */
  spentS: number
  /** Tokens of context one request may hold (prompt + output). */
  contextPerSlot: number
  slots: number
  speed: CalibrationSpeed
}

export interface CalibrationDesign {
  points: CalibrationPoint[]
  estimatedS: number
  budgetS: number
  /** The richness chosen, in words: repeats, waves and output tokens. */
  richness: string
  /** True when even the leanest design is estimated past the budget: points are then cut as it runs out. */
  overBudget: boolean
}

/** Shortest prompt probed: the chat template alone is about this long. */
export const SHORTEST_PROMPT = 16
const PREFILL_LENGTHS = 6
const MAX_DECODE_BATCHES = 6
const PREFILL_OUTPUT_TOKENS = 2
/**
 * The share of the budget left a design's estimate may fill: a busy machine's speed swings between
 * the first look and the points (on the kit under load 17 a design estimated at 126 s took 127 s more).
 */
const BUDGET_MARGIN = 0.8

/**
 * Richest first: the first whose estimate fits the budget is chosen. Two waves at least: a loop's
 * steady window runs from its last stream's start to its first stream's end, which one wave leaves empty.
 */
const LADDER = [
  { repeats: 3, waves: 3, output: 48 },
  { repeats: 3, waves: 2, output: 48 },
  { repeats: 2, waves: 2, output: 32 },
  { repeats: 2, waves: 2, output: 24 },
  { repeats: 2, waves: 2, output: 16 },
] as const

export function designCalibration(input: DesignInput): CalibrationDesign {
  const left = Math.max(0, input.budgetS - input.spentS)
  for (const [i, rung] of LADDER.entries()) {
    const points = pointsFor(input, rung)
    const estimatedS = sum(points.map((point) => point.estimatedS))
    const last = i === LADDER.length - 1
    if (estimatedS <= left * BUDGET_MARGIN || last)
      return {
        points,
        estimatedS,
        budgetS: input.budgetS,
        richness: `prompt lengths seen ${rung.repeats}× each; decode ${rung.waves} wave(s) of ${rung.output} output tokens per stream`,
        overBudget: estimatedS > left,
      }
  }
  throw new Error('unreachable: the ladder has a last rung')
}

/** The prompt lengths the prefill is seen at: geometric from the shortest to 3/4 of the context. */
export function prefillLengths(contextPerSlot: number): number[] {
  const top = Math.max(SHORTEST_PROMPT * 2, Math.floor(contextPerSlot * 0.75) - PREFILL_OUTPUT_TOKENS)
  const ratio = top / SHORTEST_PROMPT
  return unique(
    Array.from({ length: PREFILL_LENGTHS }, (_, i) =>
      Math.round(SHORTEST_PROMPT * ratio ** (i / (PREFILL_LENGTHS - 1))),
    ),
  )
}

/** Batch sizes decoded at: every one up to six slots, else six spread geometrically from 1 to the slots. */
export function decodeBatches(slots: number): number[] {
  if (slots <= MAX_DECODE_BATCHES) return Array.from({ length: slots }, (_, i) => i + 1)
  return unique(
    Array.from({ length: MAX_DECODE_BATCHES }, (_, i) => Math.round(slots ** (i / (MAX_DECODE_BATCHES - 1)))),
  )
}

/** The two prompt lengths decoded at: short, and half the context less the output. */
export function decodePrompts(contextPerSlot: number, outputTokens: number): [number, number] {
  const long = Math.max(SHORTEST_PROMPT * 4, Math.floor(contextPerSlot / 2) - outputTokens)
  return [SHORTEST_PROMPT * 2, long]
}

/** The slot probe: more streams than the slots (a few more, or 16 when the server did not say). */
export function slotProbe(
  declaredSlots: number | null,
  outputTokens = 32,
): Omit<CalibrationPoint, 'estimatedS'> {
  const concurrency = declaredSlots === null ? 16 : declaredSlots + Math.max(2, Math.ceil(declaredSlots / 4))
  return {
    purpose: 'slots',
    concurrency,
    requests: concurrency,
    inputTokens: SHORTEST_PROMPT * 2,
    outputTokens,
  }
}

function pointsFor(input: DesignInput, rung: (typeof LADDER)[number]): CalibrationPoint[] {
  const estimate = (point: Omit<CalibrationPoint, 'estimatedS'>): CalibrationPoint => ({
    ...point,
    estimatedS: estimatePointS(point, input.speed),
  })
  const lengths = prefillLengths(input.contextPerSlot)
  // Each pass over the lengths in the other order: a drift of the machine's speed does not line up with the length.
  const prefill = Array.from({ length: rung.repeats }, (_, pass) =>
    pass % 2 === 0 ? lengths : [...lengths].reverse(),
  ).flatMap((pass) =>
    pass.map((inputTokens) =>
      estimate({
        purpose: 'prefill',
        concurrency: 1,
        requests: 1,
        inputTokens,
        outputTokens: PREFILL_OUTPUT_TOKENS,
      }),
    ),
  )
  const decode = decodePrompts(input.contextPerSlot, rung.output).flatMap((inputTokens) =>
    decodeBatches(input.slots).map((concurrency) =>
      estimate({
        purpose: 'decode',
        concurrency,
        requests: rung.waves * concurrency,
        inputTokens,
        outputTokens: rung.output,
      }),
    ),
  )
  return [...prefill, ...decode]
}

/**
 * A closed loop's time, on the slow side: every wave's prefills one after another (an engine that
 * stalls decoding for them) and its tokens at the full batch's step.
 */
export function estimatePointS(point: Omit<CalibrationPoint, 'estimatedS'>, speed: CalibrationSpeed): number {
  const prefill = speed.prefillBaseMs + speed.prefillMsPerToken * point.inputTokens
  const waves = Math.ceil(point.requests / point.concurrency)
  const perWave = point.concurrency * prefill + (point.outputTokens - 1) * speed.fullStepMs
  return (waves * perWave) / 1000
}

function unique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b)
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}
