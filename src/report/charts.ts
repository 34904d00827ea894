import * as vega from 'vega'
import { compile, type TopLevelSpec } from 'vega-lite'
import type { BenchResult } from '../result/bench-result.js'
import type { ServerTimeline } from './server-timeline.js'
import { levelAxisTitle } from './workload-notes.js'

/** One chart of the report: a file name, a title, and how many series and points it must show. */
export interface Chart {
  name: string
  title: string
  svg: string
  series: number
  points: number
}

interface Point {
  /**
   * The level value (a rate in request_rate mode). Named as before the result's rename because Vega
   * writes field names into the SVG's tooltips and aria-labels, which the report must keep as they were.
   */
  concurrency: number
  value: number
  series: string
}

/**
 * The report's charts, rendered to SVG by Vega in Node (no browser, no network): concurrency vs
 * TTFT (p50/p95/p99), vs output throughput, vs success rate, vs TPOT/ITL, and, when the server gave
 * its own figures, client TTFT beside the server's. Every point carries
 * an aria-label with its figures, which the HTML report shows on hover.
 */
export async function renderCharts(
  result: BenchResult,
  timeline: ServerTimeline | null = null,
): Promise<Chart[]> {
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const keys = result.meta.percentiles.map((p) => `p${p}`)
  const series = (
    name: string,
    pick: (level: BenchResult['levels'][number]) => number | null | undefined,
  ): Point[] =>
    levels.flatMap((level) => {
      const value = pick(level)
      return value === null || value === undefined ? [] : [{ concurrency: level.value, value, series: name }]
    })
  const charts: { name: string; title: string; unit: string; points: Point[] }[] = [
    {
      name: 'ttft',
      title: 'Time to first token',
      unit: 'TTFT (ms)',
      points: [
        ...keys.flatMap((key) => series(`TTFT ${key}`, (level) => level.ttft_ms[key])),
        // Request-rate mode: the same from the intended send time, where a client that fell behind shows.
        ...(result.meta.load.mode === 'request_rate'
          ? keys.flatMap((key) =>
              series(`TTFT ${key} from intended`, (level) => level.ttft_ms_from_intended?.[key]),
            )
          : []),
      ],
    },
    {
      name: 'throughput',
      title: 'Output throughput',
      unit: 'output tokens/s',
      points: series('output tokens/s', (level) => level.output_tokens_per_s),
    },
    {
      name: 'success-rate',
      title: 'Success rate',
      unit: 'success rate (%)',
      points: series('success rate', (level) => level.success_rate * 100),
    },
    {
      name: 'tpot-itl',
      title: 'Time per output token and inter-token latency',
      unit: 'ms',
      points: [
        ...keys.flatMap((key) => series(`TPOT ${key}`, (level) => level.tpot_ms[key])),
        ...series('ITL p50', (level) => level.itl_ms.p50),
      ],
    },
  ]
  // The server's view of the wait beside the client's, when the server gave one (its /metrics or its
  // own timings): where client TTFT leaves the server's, the time goes outside the engine.
  const serverSide = [
    ...series('server TTFT p50 (bucketed)', (level) => level.server?.ttft_ms_bucketed?.p50),
    ...series('server prefill p50', (level) => level.in_band?.server_prefill_ms.p50),
    ...series('queue before engine p50', (level) => level.in_band?.queue_ms.p50),
  ]
  if (serverSide.length > 0)
    charts.push({
      name: 'ttft-client-server',
      title: "Client TTFT and the server's view",
      unit: 'ms',
      points: [...series('client TTFT p50', (level) => level.ttft_ms.p50), ...serverSide],
    })
  const stats = ['min', ...keys, 'max']
  const distribution = levels.flatMap((level) =>
    stats.flatMap((stat) => {
      const value = level.ttft_ms[stat]
      return value === null || value === undefined ? [] : [{ concurrency: level.value, value, series: stat }]
    }),
  )
  const distributionChart: Promise<Chart> = (async () => ({
    name: 'ttft-distribution',
    title: 'TTFT distribution per level',
    svg: await distributionSvg(distribution, levelAxisTitle(result.meta)),
    series: new Set(distribution.map((point) => point.series)).size,
    points: distribution.length,
  }))()
  const lineCharts = Promise.all(
    charts.map(async (chart) => ({
      name: chart.name,
      title: chart.title,
      svg: await toSvg(chart.title, chart.unit, chart.points, levelAxisTitle(result.meta)),
      series: new Set(chart.points.map((point) => point.series)).size,
      points: chart.points.length,
    })),
  )
  const timelineChart: Chart[] =
    timeline === null || timeline.samples.length === 0
      ? []
      : [
          {
            name: 'server-timeline',
            title: 'Server: running and waiting requests over the run',
            svg: await timelineSvg(timeline),
            series: new Set(timeline.samples.map((sample) => sample.series)).size,
            points: timeline.samples.length,
          },
        ]
  return [...(await lineCharts), await distributionChart, ...timelineChart]
}

/** The engine's gauges against time, a rule where each level's measured window began. */
async function timelineSvg(timeline: ServerTimeline): Promise<string> {
  const spec: TopLevelSpec = {
    title: 'Server: running and waiting requests over the run',
    width: 520,
    height: 260,
    background: 'white',
    layer: [
      {
        data: { values: timeline.samples },
        mark: { type: 'line', point: { size: 20 }, tooltip: true },
        encoding: {
          x: { field: 'seconds', type: 'quantitative', title: 'seconds into the run' },
          y: { field: 'value', type: 'quantitative', title: 'requests' },
          color: { field: 'series', type: 'nominal', title: null },
          tooltip: [
            { field: 'series', type: 'nominal' },
            { field: 'seconds', type: 'quantitative', format: '.1f' },
            { field: 'value', type: 'quantitative', format: '.1f' },
          ],
        },
      },
      {
        data: { values: timeline.levels },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#888' },
        encoding: { x: { field: 'seconds', type: 'quantitative' } },
      },
      {
        data: { values: timeline.levels },
        mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, dy: 2, color: '#555', fontSize: 10 },
        encoding: {
          x: { field: 'seconds', type: 'quantitative' },
          y: { value: 0 },
          text: { field: 'label' },
        },
      },
    ],
  }
  return render(spec)
}

/** Per level, TTFT's min, percentiles and max as points on one vertical: the spread at a glance. */
async function distributionSvg(points: Point[], axisTitle: string): Promise<string> {
  const spec: TopLevelSpec = {
    title: 'TTFT distribution per level',
    width: 520,
    height: 260,
    background: 'white',
    data: { values: points },
    mark: { type: 'point', filled: true, size: 60, tooltip: true },
    encoding: {
      x: { field: 'concurrency', type: 'ordinal', title: axisTitle },
      y: { field: 'value', type: 'quantitative', title: 'TTFT (ms)', scale: { type: 'symlog' } },
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 240 } },
      tooltip: [
        { field: 'series', type: 'nominal' },
        { field: 'concurrency', type: 'ordinal' },
        { field: 'value', type: 'quantitative', format: '.1f' },
      ],
    },
  }
  return render(spec)
}

async function render(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

async function toSvg(title: string, unit: string, points: Point[], axisTitle: string): Promise<string> {
  const spec: TopLevelSpec = {
    title,
    width: 520,
    height: 260,
    background: 'white',
    data: { values: points },
    mark: { type: 'line', point: { size: 50 }, tooltip: true },
    encoding: {
      x: {
        field: 'concurrency',
        type: 'quantitative',
        title: axisTitle,
        scale: { type: 'log', base: 2 },
      },
      y: { field: 'value', type: 'quantitative', title: unit },
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 240 } },
      tooltip: [
        { field: 'series', type: 'nominal' },
        { field: 'concurrency', type: 'quantitative' },
        { field: 'value', type: 'quantitative', format: '.1f' },
      ],
    },
  }
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}
