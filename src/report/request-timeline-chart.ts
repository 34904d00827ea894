import type { TopLevelSpec } from 'vega-lite'
import { MS_LABEL } from './chart-axes.js'
import { render } from './charts.js'
import type { LevelTimeline } from './request-timeline.js'

/** One level's requests as an SVG, with what the page says about it. */
export interface TimelineChart {
  value: number
  title: string
  bars: number
  total: number
  svg: string
}

/**
 * Each request a bar from send to end (grey, red when it failed, purple when the client cancelled it), its wait for the first token drawn
 * over it in orange and the first token as a black tick: when the server queues, the orange part grows
 * level by level while the streaming part stays. Marks are named (request_marks, wait_marks,
 * first_token_marks) so the SVG can be checked.
 */
export async function timelineChart(level: LevelTimeline): Promise<TimelineChart> {
  const sampled = level.bars.length < level.total
  const title = `${level.name}${level.knee ? ' (the knee)' : ''}: ${sampled ? `${level.bars.length} of ${level.total} requests, sampled evenly` : `${level.total} requests`}`
  const withFirst = level.bars.filter((bar) => bar.first_token !== null)
  const y = {
    field: 'row',
    type: 'quantitative' as const,
    title: 'request (in send order)',
    axis: null,
    scale: { domain: [-0.5, Math.max(1, level.bars.length) - 0.5], reverse: true },
  }
  const spec: TopLevelSpec = {
    title: { text: title, color: level.knee ? '#c0392b' : '#000' },
    width: 520,
    height: Math.max(120, level.bars.length * 3),
    background: 'white',
    layer: [
      {
        name: 'request',
        data: { values: level.bars },
        mark: { type: 'rule', strokeWidth: 2, tooltip: true },
        encoding: {
          x: {
            field: 'sent',
            type: 'quantitative',
            title: "time since the level's first send",
            axis: { labelExpr: MS_LABEL },
          },
          x2: { field: 'end' },
          y,
          color: {
            field: 'outcome',
            type: 'nominal',
            title: null,
            // Cancelled (--cancel-share) in the legend only where some request was: other charts stay as they were.
            scale: level.bars.some((bar) => bar.outcome === 'cancelled')
              ? { domain: ['ok', 'failed', 'cancelled'], range: ['#9aa7b8', '#d62728', '#7f3fbf'] }
              : { domain: ['ok', 'failed'], range: ['#9aa7b8', '#d62728'] },
            legend: { labelExpr: "datum.label === 'ok' ? 'send → end' : datum.label" },
          },
        },
      },
      {
        name: 'wait',
        data: { values: withFirst },
        mark: { type: 'rule', strokeWidth: 2, color: '#f28e2b' },
        encoding: { x: { field: 'sent', type: 'quantitative' }, x2: { field: 'first_token' }, y },
      },
      {
        name: 'first_token',
        data: { values: withFirst },
        mark: { type: 'tick', orient: 'vertical', color: '#000', size: 5, thickness: 1 },
        encoding: { x: { field: 'first_token', type: 'quantitative' }, y },
      },
    ],
  }
  return { value: level.value, title, bars: level.bars.length, total: level.total, svg: await render(spec) }
}
