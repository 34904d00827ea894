import { type RoundTrip, runRoundTrip } from '../analysis/network.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import type { BucketRange } from '../server-metrics/level-figures.js'

/**
 * The server's own figures as table columns, present only when some level has them: what the engine
 * ran and queued, its TTFT beside the client's with the time spent outside its scheduler, the time
 * before the engine from the streams' own timings (client TTFT minus the server's prefill), and the
 * GPU energy per output token when the GPUs were scraped.
 */
export interface ServerColumn {
  head: string
  cell: (level: LevelSummary) => string
}

const COLUMNS: {
  column: ServerColumn | ((result: BenchResult) => ServerColumn)
  shown: (level: LevelSummary) => boolean
}[] = [
  {
    shown: (level) => level.server?.running != null || level.server?.waiting != null,
    column: {
      head: 'server run / wait\nmax / mean',
      cell: (level) => `${gauge(level.server?.running?.max, 0)} / ${gauge(level.server?.waiting?.mean, 1)}`,
    },
  },
  {
    shown: (level) => level.server?.ttft_ms_bucketed != null,
    column: {
      head: 'server TTFT p50\n(outside sched.)',
      cell: (level) => {
        const bucketed = level.server?.ttft_ms_bucketed
        const server = bucketed?.p50
        const outside = level.server?.outside_scheduler_ms
        return server == null
          ? '-'
          : `${bucketedText(server, bucketed?.ranges?.p50)}${outside == null ? '' : ` (${outside.toFixed(0)})`}`
      },
    },
  },
  {
    shown: (level) => level.in_band?.queue_ms.p50 != null,
    column: (result) => queueColumn(runRoundTrip(result.levels)),
  },
  {
    shown: (level) => level.server?.joules_per_output_token != null,
    column: { head: 'GPU J /\nout token', cell: (level) => gauge(level.server?.joules_per_output_token, 3) },
  },
]

export function serverColumns(result: BenchResult): ServerColumn[] {
  return COLUMNS.filter(({ shown }) => result.levels.some(shown)).map(({ column }) =>
    typeof column === 'function' ? column(result) : column,
  )
}

/**
 * Client TTFT − server prefill p50, less the run's round trip (analysis/network.ts): the network is
 * crossed at any load, so only what is left is a queue. The head says how much was taken out.
 */
function queueColumn(roundTrip: RoundTrip | null): ServerColumn {
  const rtt = roundTrip?.ms ?? 0
  return {
    head: `queue before engine\n${roundTrip === null ? '' : `less ${rtt.toFixed(0)} ms RTT, `}p50 ms (prefill)`,
    cell: (level) => {
      const queue = level.in_band?.queue_ms.p50
      const prefill = level.in_band?.server_prefill_ms.p50
      return queue == null
        ? '-'
        : `${Math.max(0, queue - rtt).toFixed(0)}${prefill == null ? '' : ` (${prefill.toFixed(0)})`}`
    },
  }
}

/**
 * A bucketed percentile: the estimate, or where its bucket is wider than the estimate, the interval
 * the true value is in ("0–0.006" from a first bucket of 300 ms cut at the mean's bound; ">5000"
 * past the last finite bound with no mean to bound it).
 */
export function bucketedText(value: number, range: BucketRange | undefined): string {
  if (range === undefined) return value.toFixed(0)
  return range.high === null ? `>${msText(range.low)}` : `${msText(range.low)}–${msText(range.high)}`
}

/** Whole milliseconds, with the digits a value below 10 ms needs to read as more than 0. */
function msText(value: number): string {
  if (value === 0 || value >= 10) return value.toFixed(0)
  return value >= 1 ? value.toFixed(1) : String(Number(value.toPrecision(1)))
}

function gauge(value: number | null | undefined, digits: number): string {
  return value == null ? '-' : value.toFixed(digits)
}
