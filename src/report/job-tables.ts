import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'

/** A titled table (the shape session-tables.ts draws). */
interface Table {
  title: string
  head: string[]
  rows: string[][]
}

/**
 * A job run's figures under the level table: per level, how long a whole job took (with and without
 * its tool waits), its tokens and the jobs per hour; then TTFT and the cached share by turn depth,
 * where the prefix cache's work along a job shows. Empty when no level has job figures.
 */
export function jobTables(result: BenchResult): Table[] {
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const tables: Table[] = []
  const jobRows = levels.flatMap((level) => {
    const jobs = level.jobs
    if (jobs === undefined) return []
    return [
      [
        levelName(result.meta, level.value),
        jobs.incomplete > 0 ? `${jobs.complete} (+${jobs.incomplete} cut)` : String(jobs.complete),
        `${seconds(jobs.jct_p50_ms)} / ${seconds(jobs.jct_p90_ms)}`,
        `${seconds(jobs.jct_without_tools_p50_ms)} / ${seconds(jobs.jct_without_tools_p90_ms)}`,
        whole(jobs.input_tokens_per_job),
        whole(jobs.output_tokens_per_job),
        whole(jobs.jobs_per_hour),
      ],
    ]
  })
  if (jobRows.length === 0) return tables
  tables.push({
    title: 'Jobs (completion time: first turn sent to last turn ended; without tools: the requests alone)',
    head: [
      'level',
      'jobs',
      'JCT s p50 / p90',
      'without tools s p50 / p90',
      'in tok/job',
      'out tok/job',
      'jobs/h',
    ],
    rows: jobRows,
  })
  const tools = levels.some((level) =>
    (level.jobs?.by_depth ?? []).some((d) => d.tool_call_turns !== undefined),
  )
  const depthRows = levels.flatMap((level) =>
    (level.jobs?.by_depth ?? []).map((d) => [
      levelName(result.meta, level.value),
      String(d.depth),
      String(d.requests),
      `${whole(d.ttft_p50_ms)} / ${whole(d.ttft_p90_ms)}`,
      d.cached_share === null ? '–' : `${(d.cached_share * 100).toFixed(1)}%`,
      ...(tools ? [String(d.tool_call_turns ?? 0)] : []),
    ]),
  )
  if (depthRows.length > 0)
    tables.push({
      title: 'Jobs, per turn depth (0 = a job’s first turns)',
      head: ['level', 'depth', 'requests', 'TTFT ms p50 / p90', 'cached', ...(tools ? ['tool calls'] : [])],
      rows: depthRows,
    })
  return tables
}

function seconds(ms: number | null): string {
  return ms === null ? '–' : (ms / 1000).toFixed(2)
}

function whole(value: number | null): string {
  return value === null ? '–' : String(Math.round(value))
}
