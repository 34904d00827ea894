import { isCancelled, isOk, tpotMs, ttftMs } from '../metrics/derive.js'
import { round } from '../metrics/distribution.js'
import { quantileInterval } from '../metrics/intervals.js'
import { figureName, type Measure, measureOf, worseThan } from '../metrics/measures.js'
import type { RequestRecord } from '../records/types.js'

/**
 * Did the environment change while the gradient ran? The first level is measured again after the
 * last one (the control, records with phase `control`), and the two are compared figure by figure.
 * At the same concurrency the server runs the same batch, so a server that decodes slower per token
 * now than then was slowed by something else (a CPU hog, thermal throttling, another tenant), not
 * by the load: the knee and the verdicts, which compare levels measured minutes apart, are then
 * uncertain.
 */
export interface Drift {
  /** The level measured twice: the first level's value. */
  level: number
  control: DriftFigures
  first: DriftFigures
  /** True when some figure's interval in the control does not overlap the first level's, by more than the floors. */
  moved: boolean
  /** What moved and by how much, or that nothing did; in words. */
  reason: string
}

/** The figures compared: each the median over successful requests with its 95% interval; null when too few had it. */
export interface DriftFigures {
  requests: number
  failed: number
  ttft_ms: MedianWithInterval | null
  tpot_ms: MedianWithInterval | null
  /** llama.cpp `timings`: predicted_ms / predicted_n, the engine's own decode speed. */
  server_decode_ms_per_token: MedianWithInterval | null
  /** llama.cpp `timings`: prompt_ms / prompt_n, the engine's own prefill speed. */
  server_prefill_ms_per_token: MedianWithInterval | null
  /** Output tokens ÷ E2E seconds of one request: a stream's throughput (the level's, divided by its streams). */
  request_tokens_per_s: MedianWithInterval | null
  /**
   * The median E2E of every request of the side, failed ones too, ms: what is left to compare when
   * too few succeeded (a server 100× slower finished two control requests, and the control said
   * "too few to compare": issue 36). Absent in older results.
   */
  e2e_ms_all_p50?: number | null
}

export interface MedianWithInterval {
  p50: number
  /** Order-statistic 95% interval of the median (see quantileInterval). */
  low: number
  high: number
  count: number
}

type FigureKey = Exclude<keyof DriftFigures, 'requests' | 'failed' | 'e2e_ms_all_p50'>

/** One successful request, as the comparison reads it; a null figure is one the request has not. */
type DriftSample = Record<FigureKey, number | null>

/**
 * Each figure compared: its name in words, which direction is better, and the smallest change that
 * counts. TTFT and TPOT take theirs from measures.ts; the engine's speeds and a stream's throughput
 * are no per-request measure, and this table is the one place that says theirs (compare's drift band
 * reads only how far a figure moved, either way). A change must clear both the absolute floor (0.1 ms
 * on a 2 ms TPOT is timer noise, not an environment) and a tenth of the first level's median
 * (hundreds of requests make a 2% shift significant, and 2% does not move a knee).
 */
export const FIGURES: readonly {
  key: FigureKey
  name: string
  unit: string
  /** Lower is better for a time per token; higher for tokens per second: moving the other way is slower. */
  better: Measure['better']
  floor: number
}[] = [
  {
    key: 'server_decode_ms_per_token',
    name: 'server decode',
    unit: 'ms/token',
    better: 'lower',
    floor: 0.5,
  },
  {
    key: 'server_prefill_ms_per_token',
    name: 'server prefill',
    unit: 'ms/token',
    better: 'lower',
    floor: 0.2,
  },
  // The result's drift fields; each measure's name, direction and floor are its own (measures.ts).
  ...(['tpot', 'ttft'] as const).map((key) => {
    const measure = measureOf(key) as Measure
    return {
      key: `${key}_ms` as const,
      name: figureName(measure, 50),
      unit: measure.unit,
      better: measure.better,
      floor: measure.floor ?? 0,
    }
  }),
  {
    key: 'request_tokens_per_s',
    name: 'tokens/s per stream',
    unit: 'tok/s',
    better: 'higher',
    floor: 1,
  },
]
export const RELATIVE_FLOOR = 0.1
/** Fewer requests with a figure than this, and the figure is not compared. */
const MIN_COUNT = 3
/** With too few successes to compare, a median request this many times longer (or shorter) is a moved environment. */
const SLOWDOWN_WITHOUT_FIGURES = 3

function medianOf(values: readonly number[]): number {
  const sorted = Float64Array.from(values).sort()
  const n = sorted.length
  return n % 2 === 1
    ? (sorted[(n - 1) / 2] as number)
    : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2
}

function sampleOf(record: RequestRecord): DriftSample {
  const timings = record.server_timings ?? null
  const perToken = (ms: number | null | undefined, n: number | null | undefined): number | null =>
    ms == null || n == null || n <= 0 ? null : ms / n
  const e2eS = (record.end_at - record.sent_at) / 1000
  return {
    ttft_ms: ttftMs(record),
    tpot_ms: tpotMs(record),
    server_decode_ms_per_token: perToken(timings?.predicted_ms, timings?.predicted_n),
    server_prefill_ms_per_token: perToken(timings?.prompt_ms, timings?.prompt_n),
    request_tokens_per_s: e2eS > 0 && record.output_tokens > 0 ? record.output_tokens / e2eS : null,
  }
}

/** The records of one side (the first level's measured ones, or the control's), figure by figure. */
class Side {
  requests = 0
  failed = 0
  private readonly e2e: number[] = []
  private readonly values = new Map<FigureKey, number[]>(FIGURES.map(({ key }) => [key, []]))

  add(record: RequestRecord): void {
    // Cancelled on purpose (--cancel-share): no failure, and its times end where the client chose.
    if (isCancelled(record)) return
    this.requests++
    this.e2e.push(record.end_at - record.sent_at)
    if (!isOk(record)) {
      this.failed++
      return
    }
    const sample = sampleOf(record)
    for (const [key, values] of this.values) {
      const value = sample[key]
      if (value !== null && Number.isFinite(value)) values.push(value)
    }
  }

  get ok(): number {
    return this.requests - this.failed
  }

  figures(): DriftFigures {
    const median = (key: FigureKey): MedianWithInterval | null => {
      const sorted = Float64Array.from(this.values.get(key) ?? []).sort()
      const interval = quantileInterval(sorted, 0.5)
      if (sorted.length < MIN_COUNT || interval === null) return null
      const n = sorted.length
      const p50 =
        n % 2 === 1 ? sorted[(n - 1) / 2] : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2
      return { p50: round(p50 as number), low: round(interval.low), high: round(interval.high), count: n }
    }
    return {
      requests: this.requests,
      failed: this.failed,
      ttft_ms: median('ttft_ms'),
      tpot_ms: median('tpot_ms'),
      server_decode_ms_per_token: median('server_decode_ms_per_token'),
      server_prefill_ms_per_token: median('server_prefill_ms_per_token'),
      request_tokens_per_s: median('request_tokens_per_s'),
      e2e_ms_all_p50: this.e2e.length === 0 ? null : round(medianOf(this.e2e)),
    }
  }
}

/**
 * Gathers both sides from records as they come (the run) or from requests.jsonl (`report`), so both
 * compute the same drift: the first level's measured records, and the control's.
 */
export class DriftSamples {
  private readonly first = new Side()
  private readonly control = new Side()

  /** `level`: the first level's value, the one the control repeats. */
  constructor(readonly level: number) {}

  add(record: RequestRecord): void {
    if (record.phase === 'control') this.control.add(record)
    else if (record.phase === 'measure' && record.level === this.level) this.first.add(record)
  }

  /** The first level's figures so far: what the control is sized on (run/plan/control-size.ts). */
  firstFigures(): DriftFigures {
    return this.first.figures()
  }

  /** Successful measured requests of the first level so far: a control needs some to compare with. */
  get firstSucceeded(): number {
    return this.first.ok
  }

  /** The comparison; null when no control was run (one level, interrupted, rate mode, --no-control, older versions). */
  result(): Drift | null {
    if (this.control.requests === 0) return null
    return compareControl(this.level, this.first.figures(), this.control.figures())
  }
}

/** The control against the first level: moved when a figure's intervals are apart by more than its floors. */
export function compareControl(level: number, first: DriftFigures, control: DriftFigures): Drift {
  const moves: string[] = []
  const held: string[] = []
  for (const figure of FIGURES) {
    const before = first[figure.key]
    const after = control[figure.key]
    if (before === null || after === null) continue
    const text = `${figure.name} ${describe(after, figure.unit)} against ${describe(before, figure.unit)}`
    const apart = after.low > before.high || after.high < before.low
    const change = Math.abs(after.p50 - before.p50)
    if (apart && change >= Math.max(figure.floor, RELATIVE_FLOOR * Math.abs(before.p50))) {
      const slower = worseThan(figure, after.p50, before.p50)
      moves.push(`${text} (${slower ? 'slower' : 'faster'})`)
    } else held.push(text)
  }
  const at = `c=${level}`
  // Too few succeeded to compare figure by figure: the requests' own durations still tell a server
  // that became many times slower (or one that now fails slowly) from one that did not.
  const before = first.e2e_ms_all_p50 ?? null
  const after = control.e2e_ms_all_p50 ?? null
  if (held.length === 0 && moves.length === 0 && before !== null && after !== null && before > 0) {
    const ratio = after / before
    if (ratio >= SLOWDOWN_WITHOUT_FIGURES || ratio <= 1 / SLOWDOWN_WITHOUT_FIGURES)
      moves.push(
        `too few requests succeeded to compare figure by figure, but the median request took ${round(after)} ms against ${round(before)} ms (${ratio >= 1 ? `${ratio.toFixed(1)}× slower` : `${(1 / ratio).toFixed(1)}× faster`})`,
      )
  }
  if (moves.length > 0)
    return {
      level,
      control,
      first,
      moved: true,
      reason: `the environment drifted: ${at} measured again at the end differs from its first measurement beyond the intervals: ${moves.join('; ')}. Levels measured at different times are not comparable, so the knee and the verdicts are uncertain`,
    }
  return {
    level,
    control,
    first,
    moved: false,
    reason:
      held.length === 0
        ? `${at} measured again at the end: too few successful requests to compare (${control.requests - control.failed} in the control, ${first.requests - first.failed} in the first measurement)`
        : `${at} measured again at the end matches its first measurement within the intervals: ${held.join('; ')}`,
  }
}

/** `12.3 (11.9–12.8) ms`: the median and its interval. */
function describe(figure: MedianWithInterval, unit: string): string {
  const digits = Math.abs(figure.p50) >= 100 ? 0 : Math.abs(figure.p50) >= 10 ? 1 : 2
  const n = (value: number): string => value.toFixed(digits)
  return `${n(figure.p50)} (${n(figure.low)}–${n(figure.high)}) ${unit}`
}
