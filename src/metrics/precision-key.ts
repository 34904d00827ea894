import { keysFor, type MeasureKey, parseFigureKey } from './measures.js'

/**
 * The figures --precision can ask for, named as users write them: a percentile of a measure that
 * takes precision targets (measures.ts: `ttft_p95`, `tpot_p50`, `e2e_p99`) or `tput` (output tokens/s
 * over the level's window). The target is a relative half-width of the figure's 95% interval, in percent.
 */
export type PrecisionFigure =
  | { kind: 'percentile'; metric: MeasureKey; percentile: number }
  | { kind: 'throughput' }

/** The figure a key names, or why it names none. */
export function parsePrecisionKey(key: string): PrecisionFigure | string {
  if (key === 'tput') return { kind: 'throughput' }
  const parsed = parseFigureKey(key, 'precision')
  if (parsed === null)
    return `"${key}" is not a figure: expected tput or a percentile such as ttft_p95, tpot_p50, e2e_p99 (of ${keysFor('precision')})`
  const { percentile } = parsed
  if (!(percentile > 0 && percentile < 100)) return `"${key}": the percentile must be above 0 and below 100`
  return { kind: 'percentile', metric: parsed.measure.key as MeasureKey, percentile }
}

/** "ttft_p95=5%,tput=3%" → { ttft_p95: 5, tput: 3 } (percent; the % sign optional); bad values stay NaN. */
export function precisionPairs(text: string): Record<string, number> {
  const pairs: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const [key = '', value = ''] = pair.split('=')
    const number = value.trim().replace(/%$/, '')
    pairs[key.trim()] = number === '' ? Number.NaN : Number(number)
  }
  return pairs
}
