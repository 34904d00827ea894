import type { Distribution } from '../metrics/distribution.js'
import { levelName } from '../metrics/level-name.js'
import { MEASURES } from '../metrics/measures.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { type CsvValue, csvRow } from './csv.js'

/**
 * levels.csv: one row per level with its main figures, the unit in every column's name (`_ms`,
 * `_per_s`, `_s`, a 0–1 fraction), for a spreadsheet or a plotting script. The percentile columns
 * follow the run's percentiles (metrics.percentiles).
 */

/** Every measure a level holds a distribution of (measures.ts), its columns named by its key. */
const LATENCIES = MEASURES.flatMap((measure) =>
  'field' in measure
    ? [[measure.key, (level: LevelSummary): Distribution => level[measure.field]] as const]
    : [],
)

/** The level's value column, named by what it counts. */
function levelColumn(result: BenchResult): string {
  if (result.meta.trace != null) return 'level_speed_x'
  return result.meta.load?.mode === 'request_rate' ? 'level_requests_per_s' : 'level_streams'
}

/** `p50`, `p95`, ... in the order the summary holds them. */
function percentileKeys(distribution: Distribution | undefined): string[] {
  if (distribution === undefined) return []
  return Object.keys(distribution).filter((key) => /^p\d/.test(key))
}

export function renderLevelsCsv(result: BenchResult): string {
  const percentiles = percentileKeys(result.levels[0]?.ttft_ms)
  const latencyHeaders = LATENCIES.flatMap(([name]) => [
    `${name}_mean_ms`,
    ...percentiles.map((p) => `${name}_${p}_ms`),
  ])
  const header = [
    levelColumn(result),
    'name',
    'requests',
    'ok',
    'failed',
    'success_rate_fraction',
    ...latencyHeaders,
    'output_tokens_per_s',
    'output_tokens_per_s_steady',
    'requests_per_s',
    'output_tokens',
    'duration_s',
    'achieved_concurrency_mean',
    'achieved_concurrency_max',
    'slo_met',
    'goodput_requests_per_s',
  ]
  let text = csvRow(header)
  for (const level of result.levels) {
    const latencies: CsvValue[] = LATENCIES.flatMap(([, of]) => {
      const distribution = of(level)
      return [distribution.mean, ...percentiles.map((p) => distribution[p] ?? null)]
    })
    text += csvRow([
      level.value,
      levelName(result.meta, level.value),
      level.requests,
      level.ok,
      level.failed,
      level.success_rate,
      ...latencies,
      level.output_tokens_per_s,
      level.output_tokens_per_s_steady,
      level.requests_per_s,
      level.output_tokens,
      level.duration_s,
      level.achieved_concurrency.mean,
      level.achieved_concurrency.max,
      level.slo?.meets ?? null,
      level.slo?.goodput_requests_per_s ?? null,
    ])
  }
  return text
}
