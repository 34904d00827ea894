import type { RequestRecord } from '../records/types.js'
import type { CalibrationPoint } from './calibration-design.js'
import { measurePoint } from './calibration-measure.js'
import type { PredictionInterval } from './capacity-model.js'

/**
 * How far one point of the calibration moves when it is measured again (issue 39): its batch-1
 * decode loop is sent once more after the design has run, and the two TPOT medians compared. On the
 * kit, on a quiet host, llama.cpp's own decode time per token at c=1 moved 10.3–13.1 ms within four
 * minutes, and two calibrations two minutes apart saw a batch-1 step of 13.8 and 8.5 ms; three
 * calibrations of one 3-slot server saw the repeat 13–23% faster than the first measurement, 27–30 s
 * later (the machine, or the server's state after the points between: what its slots held). Either
 * way a model is no closer to a later run than the server is to itself, and an interval taken from
 * the calibration's own points alone did not say so.
 */
export interface SpeedCheck {
  /** The point measured twice, in words. */
  point: string
  first_tpot_ms: number
  repeat_tpot_ms: number
  /** repeat / first − 1. */
  change: number
  /** From the first measurement's start to the repeat's. */
  seconds_apart: number
}

/** The point repeated: the design's first batch-1 decode loop at its shortest prompt; null without one. */
export function speedCheckPoint(points: readonly CalibrationPoint[]): CalibrationPoint | null {
  const candidates = points.filter((point) => point.purpose === 'decode' && point.concurrency === 1)
  if (candidates.length === 0) return null
  return candidates.reduce((best, point) => (point.inputTokens < best.inputTokens ? point : best))
}

/** The two measurements of one point set side by side; null when either has no TPOT. */
export function speedCheck(
  point: CalibrationPoint,
  first: readonly RequestRecord[],
  repeat: readonly RequestRecord[],
  secondsApart: number,
): SpeedCheck | null {
  const before = measurePoint(point, first).tpotP50Ms
  const after = measurePoint(point, repeat).tpotP50Ms
  if (before === null || after === null || !(before > 0)) return null
  return {
    point: `decode at batch 1, ${point.inputTokens}-token prompts, ${point.outputTokens} output tokens`,
    first_tpot_ms: round(before, 100),
    repeat_tpot_ms: round(after, 100),
    change: round(after / before - 1, 10000),
    seconds_apart: round(secondsApart, 10),
  }
}

/**
 * The prediction interval with the repeat's change added to each figure's relative error: a later run
 * can meet the server as far from its calibration as the repeat was from the first measurement.
 * Added, not combined in quadrature: the two are not independent draws (a slower machine moves every
 * point of the calibration and every later run alike).
 */
export function widenedBySpeedCheck(interval: PredictionInterval, check: SpeedCheck): PredictionInterval {
  const drift = Math.abs(check.change)
  const widen = (error: number) => round(error + drift, 10000)
  return {
    ...interval,
    relative_error: {
      output_tokens_per_s: widen(interval.relative_error.output_tokens_per_s),
      ttft_ms: widen(interval.relative_error.ttft_ms),
      tpot_ms: widen(interval.relative_error.tpot_ms),
    },
    basis:
      `${interval.basis}; plus ${(drift * 100).toFixed(1)}%, how far one point moved when measured again ` +
      `(${check.point}: TPOT p50 ${check.first_tpot_ms} ms, then ${check.repeat_tpot_ms} ms ${check.seconds_apart} s later; ` +
      "the machine's or the server's own state, which a later run can meet too)",
  }
}

function round(x: number, scale: number): number {
  return Math.round(x * scale) / scale
}
