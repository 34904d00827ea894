import type { TopLevelSpec } from 'vega-lite'
import { levelName } from '../metrics/level-name.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { BenchResult } from '../result/bench-result.js'
import { msAxis, PERCENT_AXIS, pointTooltip } from './chart-axes.js'
import { kneeLayers } from './chart-knee.js'
import type { ServerTimeline } from './server-timeline.js'
import { vegaLibraries } from './vega-libraries.js'
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
  const charts = lineChartSpecs(result, levels, keys)
  const stats = ['min', ...keys, 'max']
  const distribution = levels.flatMap((level) =>
    stats.flatMap((stat) => {
      const value = level.ttft_ms[stat]
      return value === null || value === undefined ? [] : [{ concurrency: level.value, value, series: stat }]
    }),
  )
  const knee = result.saturation?.value ?? null
  const distributionChart: Promise<Chart> = (async () => ({
    name: 'ttft-distribution',
    title: 'TTFT distribution per level',
    svg: await distributionSvg(distribution, levelAxisTitle(result.meta), knee),
    series: new Set(distribution.map((point) => point.series)).size,
    points: distribution.length,
  }))()
  // A chart with nothing to draw is left out (embeddings have no TTFT or TPOT).
  const lineCharts = Promise.all(
    charts
      .filter((chart) => chart.points.length > 0)
      .map(async (chart) => ({
        name: chart.name,
        title: chart.title,
        svg: await toSvg(chart, levelAxisTitle(result.meta), knee),
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
            svg: await timelineSvg(timeline, knee === null ? null : levelName(result.meta, knee)),
            series: new Set(timeline.samples.map((sample) => sample.series)).size,
            points: timeline.samples.length,
          },
        ]
  return [
    ...(await lineCharts),
    ...(distribution.length > 0 ? [await distributionChart] : []),
    ...timelineChart,
  ]
}

type Level = BenchResult['levels'][number]
interface LineChart {
  name: string
  title: string
  unit: string
  points: Point[]
  y?: YAxis
}

/** One line's points: the figure `pick` finds in each level that has it, against the level's value. */
function seriesOf(levels: Level[]) {
  return (name: string, pick: (level: Level) => number | null | undefined): Point[] =>
    levels.flatMap((level) => {
      const value = pick(level)
      return value === null || value === undefined ? [] : [{ concurrency: level.value, value, series: name }]
    })
}

/** The line charts (a figure against the level value each) as data, before they are drawn. */
function lineChartSpecs(result: BenchResult, levels: Level[], keys: string[]): LineChart[] {
  const series = seriesOf(levels)
  const charts: LineChart[] = [
    {
      name: 'ttft',
      title: 'Time to first token',
      unit: 'TTFT (ms, log scale)',
      // Log: a knee's 30 s would squash healthy levels' 30 ms to the floor on a linear axis.
      y: 'log-ms',
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
    // Embeddings generate no token: their throughput is inputs embedded per second.
    !protocolOf(result.meta.target.protocol).generatesTokens
      ? {
          name: 'throughput',
          title: 'Embedding throughput',
          unit: 'inputs/s',
          points: series('inputs/s', (level) => level.embeddings?.inputs_per_s),
        }
      : {
          name: 'throughput',
          title: 'Output throughput',
          unit: 'output tokens/s',
          points: series('output tokens/s', (level) => level.output_tokens_per_s),
        },
    {
      name: 'success-rate',
      title: 'Success rate',
      unit: 'success rate (%)',
      y: 'percent',
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
      unit: 'ms (log scale)',
      y: 'log-ms',
      points: [...series('client TTFT p50', (level) => level.ttft_ms.p50), ...serverSide],
    })
  return charts
}

/** The engine's gauges against time, a rule where each level's measured window began (the knee's in red). */
async function timelineSvg(timeline: ServerTimeline, kneeName: string | null): Promise<string> {
  const kneeStart = timeline.levels.find((level) => level.label === kneeName)?.seconds ?? null
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
      ...kneeLayers(
        kneeStart,
        { field: 'seconds', type: 'quantitative' },
        { label: `knee (${kneeName})`, labelY: 16 },
      ),
    ],
  }
  return render(spec)
}

/** Per level, TTFT's min, percentiles and max as points on one vertical: the spread at a glance. */
async function distributionSvg(points: Point[], axisTitle: string, knee: number | null): Promise<string> {
  const spec: TopLevelSpec = {
    title: 'TTFT distribution per level',
    width: 520,
    height: 260,
    background: 'white',
    layer: [
      {
        data: { values: points },
        mark: { type: 'point', filled: true, size: 60, tooltip: true },
        encoding: {
          x: { field: 'concurrency', type: 'ordinal', title: axisTitle },
          // Log with 1-2-5 ticks: labelled from the fastest request's milliseconds up (symlog left none below 500 ms).
          y: {
            field: 'value',
            type: 'quantitative',
            title: 'TTFT (log scale)',
            ...msAxis(points.map((point) => point.value)),
          },
          color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 240 } },
          shape: { field: 'series', type: 'nominal', title: null },
          tooltip: pointTooltip({ field: 'concurrency', type: 'ordinal' }),
        },
      },
      ...kneeLayers(knee, { field: 'concurrency', type: 'ordinal' }),
    ],
  }
  return render(spec)
}

/** A Vega-Lite spec as SVG, drawn in Node (no browser, no network). */
export async function render(spec: TopLevelSpec): Promise<string> {
  const { vega, compile } = await vegaLibraries()
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** How a line chart's value axis is drawn. */
type YAxis = 'linear' | 'log-ms' | 'percent'

function yEncoding(unit: string, y: YAxis, points: readonly Point[]): Record<string, unknown> {
  const base = { field: 'value', type: 'quantitative', title: unit }
  if (y === 'percent') return { ...base, ...PERCENT_AXIS }
  if (y === 'log-ms') return { ...base, ...msAxis(points.map((point) => point.value)) }
  return base
}

/** One line per series; percentiles told apart by colour, dash and point shape, so p95 never hides under p99. */
async function toSvg(
  chart: { title: string; unit: string; points: Point[]; y?: YAxis },
  axisTitle: string,
  knee: number | null,
): Promise<string> {
  // Ticks at the levels run, not at log 2's in-between values (1.2, 1.6, ... on a 1-to-4 gradient).
  const levels = [...new Set(chart.points.map((point) => point.concurrency))].sort((a, b) => a - b)
  const x = {
    field: 'concurrency',
    type: 'quantitative',
    title: axisTitle,
    scale: { type: 'log', base: 2 },
    axis: { values: levels },
  } as const
  const spec: TopLevelSpec = {
    title: chart.title,
    width: 520,
    height: 260,
    background: 'white',
    layer: [
      {
        data: { values: chart.points },
        mark: { type: 'line', point: { size: 50, filled: true }, tooltip: true },
        encoding: {
          x,
          y: yEncoding(chart.unit, chart.y ?? 'linear', chart.points) as never,
          color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 240 } },
          strokeDash: { field: 'series', type: 'nominal', title: null },
          shape: { field: 'series', type: 'nominal', title: null },
          tooltip: pointTooltip({ field: 'concurrency', type: 'quantitative' }),
        },
      },
      ...kneeLayers(knee, { field: 'concurrency', type: 'quantitative' }),
    ],
  }
  return render(spec)
}
