import type { TopLevelSpec } from 'vega-lite'
import { MS_LABEL } from './chart-axes.js'
import { render } from './charts.js'
import type { JobTimeline } from './job-timeline.js'

/** One job's Gantt as an SVG, with what the page says about it. */
export interface JobTimelineChart {
  level: number
  rank: 'p50' | 'p90'
  title: string
  job: string
  jct_ms: number
  turns: number
  rows: number
  svg: string
}

/**
 * Each turn a bar from its send to its last token (grey, red when it failed), its wait for the first
 * token over it in orange; a fan-out's branches on their own rows. The empty stretch between a turn's
 * end and its child's send is the tool wait (and any client delay): the time the server was not
 * asked. Marks are named (turn_marks, turn_wait_marks) so the SVG can be checked.
 */
export async function jobTimelineChart(job: JobTimeline): Promise<JobTimelineChart> {
  const which =
    job.rank === 'p90' ? 'a slow job (p90 completion time)' : 'a typical job (median completion time)'
  const title = `${job.level_name}${job.knee ? ' (the knee)' : ''}: ${which}, ${formatSeconds(job.jct_ms)}`
  const withFirst = job.turns.filter((turn) => turn.first_token !== null)
  const y = {
    field: 'row',
    type: 'ordinal' as const,
    title: 'branch',
    axis: { labelExpr: "'branch ' + (datum.value + 1)" },
  }
  const spec: TopLevelSpec = {
    title: { text: title, subtitle: `job ${job.job}, one of ${job.jobs} complete jobs` },
    width: 520,
    height: Math.max(60, job.rows * 28),
    background: 'white',
    layer: [
      {
        name: 'turn',
        data: { values: job.turns },
        mark: { type: 'bar', height: 14, tooltip: true },
        encoding: {
          x: {
            field: 'sent',
            type: 'quantitative',
            title: "time since the job's first send",
            axis: { labelExpr: MS_LABEL },
          },
          x2: { field: 'end' },
          y,
          color: {
            field: 'outcome',
            type: 'nominal',
            title: null,
            scale: { domain: ['ok', 'failed'], range: ['#9aa7b8', '#d62728'] },
            legend: {
              labelLimit: 240,
              labelExpr: "datum.label === 'ok' ? 'turn: send → last token' : 'failed'",
            },
          },
        },
      },
      {
        name: 'turn_wait',
        data: { values: withFirst },
        mark: { type: 'bar', height: 14, color: '#f28e2b' },
        encoding: { x: { field: 'sent', type: 'quantitative' }, x2: { field: 'first_token' }, y },
      },
      {
        data: { values: job.turns },
        mark: { type: 'text', align: 'left', dx: 2, fontSize: 9, color: '#222' },
        encoding: { x: { field: 'sent', type: 'quantitative' }, y, text: { field: 'turn' } },
      },
    ],
  }
  return {
    level: job.level,
    rank: job.rank,
    title,
    job: job.job,
    jct_ms: job.jct_ms,
    turns: job.turns.length,
    rows: job.rows,
    svg: await render(spec),
  }
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`
}
