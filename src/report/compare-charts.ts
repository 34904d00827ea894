import type { TopLevelSpec } from 'vega-lite'
import type { BenchResult } from '../result/bench-result.js'
import { msAxis, PERCENT_AXIS, pointTooltip } from './chart-axes.js'
import { kneeLayers } from './chart-knee.js'
import type { Chart } from './charts.js'
import { render } from './charts.js'
import { levelAxisTitle } from './workload-notes.js'

type Level = BenchResult['levels'][number]

/** The two runs' colours, and their knees' in the same hue. */
const RUNS = [
  { label: 'base', color: '#4c78a8', dash: [1, 0] },
  { label: 'new', color: '#e45756', dash: [6, 3] },
] as const

/**
 * Base and new on the same axes, one chart per headline figure (TTFT p95 on a log scale, output
 * throughput, success rate 0–100%), each run's knee a rule in its colour (marks knee_base_marks and
 * knee_new_marks). Drawn in Node like the report's charts.
 */
export async function renderCompareCharts(base: BenchResult, next: BenchResult): Promise<Chart[]> {
  const runs = [base, next]
  const ttftKey = base.meta.percentiles.includes(95) ? 'p95' : `p${base.meta.percentiles.at(-1) ?? 50}`
  return Promise.all(
    compareFigures(ttftKey).map(async (figure) => {
      const points = runs.flatMap((run, index) =>
        [...run.levels]
          .sort((a, b) => a.value - b.value)
          .flatMap((level) => {
            const value = figure.pick(level)
            return value == null
              ? []
              : [{ concurrency: level.value, value, series: RUNS[index]?.label as string }]
          }),
      )
      return {
        name: figure.name,
        title: figure.title,
        svg: await render(compareSpec(figure, points, runs, levelAxisTitle(base.meta))),
        series: new Set(points.map((point) => point.series)).size,
        points: points.length,
      }
    }),
  )
}

interface CompareFigure {
  name: string
  title: string
  unit: string
  pick: (level: Level) => number | null | undefined
  y: 'log-ms' | 'linear' | 'percent'
}

/** The headline figures compared, one chart each; TTFT at p95, or the highest percentile kept. */
function compareFigures(ttftKey: string): CompareFigure[] {
  return [
    {
      name: 'compare-ttft',
      title: `TTFT ${ttftKey}: base and new`,
      unit: `TTFT ${ttftKey} (log scale)`,
      pick: (level) => level.ttft_ms[ttftKey],
      y: 'log-ms',
    },
    {
      name: 'compare-throughput',
      title: 'Output throughput: base and new',
      unit: 'output tokens/s',
      pick: (level) => level.output_tokens_per_s,
      y: 'linear',
    },
    {
      name: 'compare-success-rate',
      title: 'Success rate: base and new',
      unit: 'success rate (%)',
      pick: (level) => level.success_rate * 100,
      y: 'percent',
    },
  ]
}

/** One figure's chart: a line per run (colour and dash tell them apart) and each run's knee. */
function compareSpec(
  figure: CompareFigure,
  points: { concurrency: number; value: number; series: string }[],
  runs: BenchResult[],
  xTitle: string,
): TopLevelSpec {
  const values = points.map((point) => point.value)
  const y = figure.y === 'log-ms' ? msAxis(values) : figure.y === 'percent' ? PERCENT_AXIS : {}
  return {
    title: figure.title,
    width: 520,
    height: 260,
    background: 'white',
    layer: [
      {
        data: { values: points },
        mark: { type: 'line', point: { size: 50, filled: true }, tooltip: true },
        encoding: {
          x: {
            field: 'concurrency',
            type: 'quantitative',
            title: xTitle,
            scale: { type: 'log', base: 2 },
            axis: {
              values: [...new Set(points.map((point) => point.concurrency))].sort((a, b) => a - b),
            },
          },
          y: { field: 'value', type: 'quantitative', title: figure.unit, ...y } as never,
          color: {
            field: 'series',
            type: 'nominal',
            title: null,
            scale: { domain: RUNS.map((run) => run.label), range: RUNS.map((run) => run.color) },
          },
          strokeDash: {
            field: 'series',
            type: 'nominal',
            title: null,
            scale: { domain: RUNS.map((run) => run.label), range: RUNS.map((run) => [...run.dash]) },
          },
          tooltip: pointTooltip({ field: 'concurrency', type: 'quantitative' }),
        },
      },
      ...runs.flatMap((run, index) => {
        const { label, color } = RUNS[index] as (typeof RUNS)[number]
        const knee = run.saturation?.value ?? null
        return kneeLayers(
          knee,
          { field: 'concurrency', type: 'quantitative' },
          { label: `${label} knee ${knee}`, name: `knee_${label}`, color, labelY: 2 + index * 14 },
        )
      }),
    ],
  }
}
