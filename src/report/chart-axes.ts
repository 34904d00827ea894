/**
 * Tick values for a log axis: 1, 2, 5 × 10^k from below the smallest value to above the largest, so a
 * chart whose figures span 30 ms to 30 s labels 20, 50, 100, ... and not only the decades (Vega's
 * default on a short log range leaves the healthy levels without a labelled tick).
 */
export function logTicks(values: readonly number[]): number[] {
  const positive = values.filter((value) => Number.isFinite(value) && value > 0)
  if (positive.length === 0) return []
  const low = Math.min(...positive)
  const high = Math.max(...positive)
  const ticks: number[] = []
  for (let exponent = Math.floor(Math.log10(low)); exponent <= Math.ceil(Math.log10(high)); exponent++)
    for (const step of [1, 2, 5]) {
      const tick = step * 10 ** exponent
      // One tick below and one above the data, so the lowest and highest points sit between labels.
      ticks.push(Number(tick.toPrecision(6)))
    }
  const below = ticks.filter((tick) => tick <= low).at(-1) ?? ticks[0]
  const above = ticks.find((tick) => tick >= high) ?? ticks.at(-1)
  return ticks.filter((tick) => tick >= (below as number) && tick <= (above as number))
}

/** Milliseconds as an axis label: "30 ms", "1.5 s". */
export const MS_LABEL =
  "datum.value >= 1000 ? format(datum.value / 1000, '~g') + ' s' : format(datum.value, '~g') + ' ms'"

/**
 * A value axis for milliseconds spanning decades: log, labelled 1-2-5; symlog (log above a few ms,
 * linear through 0) when a figure is 0 (a queue that was empty), which a log scale cannot place.
 */
export function msAxis(values: readonly number[]): {
  scale: { type: 'log' } | { type: 'symlog'; constant: number }
  axis: { values: number[]; labelExpr: string }
} {
  const hasZero = values.some((value) => value <= 0)
  return {
    scale: hasZero ? { type: 'symlog', constant: 1 } : { type: 'log' },
    axis: { values: [...(hasZero ? [0] : []), ...logTicks(values)], labelExpr: MS_LABEL },
  }
}

/** A success-rate axis: always 0 to 100%, so 90% does not look like the floor. */
export const PERCENT_AXIS = { scale: { domain: [0, 100] }, axis: { values: [0, 20, 40, 60, 80, 100] } }

/** A point's tooltip (and aria-label, which the report shows on hover): its series, level and value. */
export function pointTooltip(x: { field: string; type: 'quantitative' | 'ordinal' }) {
  return [
    { field: 'series', type: 'nominal' as const },
    { field: x.field, type: x.type },
    { field: 'value', type: 'quantitative' as const, format: '.1f' },
  ]
}
