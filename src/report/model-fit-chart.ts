import type { TopLevelSpec } from 'vega-lite'
import type { BenchResult } from '../result/bench-result.js'
import { pointTooltip } from './chart-axes.js'
import { type Chart, render } from './charts.js'

export const MODEL_FIT_TITLE = 'The capacity model over the measured levels'

/**
 * report.html's "What if" chart: each measured level's output throughput as a point and the fitted
 * model's on the same levels as a line (model.reproduction), so a reader sees where the model leaves
 * the measurements. Drawn in the page only (not in charts/); null when the model reproduced no level.
 */
export async function modelFitChart(result: BenchResult): Promise<Chart | null> {
  const reproduced = result.model?.reproduction.levels ?? []
  if (reproduced.length === 0) return null
  const measured = reproduced.map((level) => ({
    concurrency: level.level,
    value: level.measured_tokens_per_s,
    series: 'measured',
  }))
  const model = reproduced.map((level) => ({
    concurrency: level.level,
    value: level.predicted_tokens_per_s,
    series: 'model',
  }))
  const levels = [...new Set(reproduced.map((level) => level.level))].sort((a, b) => a - b)
  const x = {
    field: 'concurrency',
    type: 'quantitative',
    title: 'concurrency',
    scale: { type: 'log', base: 2 },
    axis: { values: levels },
  } as const
  const y = { field: 'value', type: 'quantitative', title: 'output tokens/s' } as const
  const color = {
    field: 'series',
    type: 'nominal',
    title: null,
    scale: { domain: ['measured', 'model'], range: ['#4c78a8', '#f58518'] },
  } as const
  const tooltip = pointTooltip({ field: 'concurrency', type: 'quantitative' })
  const spec: TopLevelSpec = {
    title: MODEL_FIT_TITLE,
    width: 420,
    height: 220,
    background: 'white',
    layer: [
      {
        data: { values: model },
        mark: { type: 'line', strokeDash: [6, 3], point: { size: 30 }, tooltip: true },
        encoding: { x, y, color, tooltip },
      },
      {
        data: { values: measured },
        mark: { type: 'point', filled: true, size: 70, tooltip: true },
        encoding: { x, y, color, tooltip },
      },
    ],
  }
  return {
    name: 'model-fit',
    title: MODEL_FIT_TITLE,
    svg: await render(spec),
    series: 2,
    points: measured.length + model.length,
  }
}
