import type { Saturation } from '../analysis/saturation.js'
import type { Capacity } from '../metrics/slo.js'
import type { LevelSummary, LoadMode } from '../metrics/summarize.js'
import { type BenchResult, RESULT_SCHEMA } from './bench-result.js'
import type { RunMeta } from './run-meta.js'

/**
 * The schema before level values were named for what they are: its `concurrency` fields held
 * requests per second in request_rate mode. Still read, so older result folders can be reported,
 * compared and merged.
 */
export const RESULT_SCHEMA_V1 = 'llmbench.result/1'

/** A level value as /1 wrote it: `concurrency`, whatever the mode, and no mode beside it. */
type V1<T extends { value: number }> = Omit<T, 'value' | 'mode'> & { concurrency: number }

/** The [client] settings meta.client holds, which results written before they moved there held in meta.load. */
type ClientSettings = Pick<RunMeta['client'], 'timeout_s' | 'retry'>

/** meta as it may have been written: the client settings in `load` (every /1 result, /2 ones of before the move). */
type StoredMeta = Omit<RunMeta, 'load' | 'client'> & {
  load: RunMeta['load'] & Partial<ClientSettings>
  client: Omit<RunMeta['client'], keyof ClientSettings> & Partial<ClientSettings>
}

/** bench_result.json as llmbench.result/1 wrote it. */
export interface ResultV1
  extends Omit<BenchResult, 'schema' | 'meta' | 'levels' | 'saturation' | 'capacity'> {
  schema: typeof RESULT_SCHEMA_V1
  meta: Omit<StoredMeta, 'levels_run'> & { levels_run: V1<RunMeta['levels_run'][number]>[] }
  levels: V1<LevelSummary>[]
  saturation: V1<Saturation> | null
  capacity: V1<Capacity> | null
}

/**
 * A parsed bench_result.json as today's model: a /2 result as it is, a /1 result upgraded (each
 * `concurrency` that held a level value becomes `value`, with the run's load mode beside it where
 * /2 has one); in both, the client settings an older llmbench wrote in meta.load are moved to
 * meta.client, and the percentiles an older llmbench spelt unit first (`ttft_ms_p50`) are named
 * as today (`ttft_p50_ms`, see percentileBeforeUnit). Any other schema is refused: `source` (the
 * file) names it in the message.
 */
export function upgradeResult(json: unknown, source: string): BenchResult {
  const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined
  if (schema === RESULT_SCHEMA) {
    const result = json as Omit<BenchResult, 'meta'> & { meta: StoredMeta }
    return percentileBeforeUnit({ ...result, meta: clientSettingsInClient(result.meta) })
  }
  if (schema === RESULT_SCHEMA_V1) return percentileBeforeUnit(upgradeV1(json as ResultV1))
  throw new Error(
    `${source}: schema ${JSON.stringify(schema)}, expected ${RESULT_SCHEMA} (or ${RESULT_SCHEMA_V1}, which is read too)`,
  )
}

/**
 * meta with the whole-request timeout and the retry count in `client`, with the other [client]
 * settings, where an older llmbench wrote them in `load`. Moved first in `client`, where a run
 * writes them now, so an upgraded file reads like a new one.
 */
function clientSettingsInClient<M extends Omit<StoredMeta, 'levels_run'>>(
  meta: M,
): Omit<M, 'load' | 'client'> & Pick<RunMeta, 'load' | 'client'> {
  const { timeout_s, retry, ...load } = meta.load
  // A summary cut down to its meta may lack either: absent stays absent (JSON drops undefined).
  const client = { timeout_s, retry, ...meta.client } as RunMeta['client']
  return { ...meta, load, client }
}

function upgradeV1(old: ResultV1): BenchResult {
  // Results written before request-rate mode existed have no load mode: they were closed loops.
  const mode: LoadMode = old.meta.load?.mode ?? 'concurrency'
  // Spreading first keeps every key where /1 had it: an upgraded file reads like the one it came from.
  return {
    ...old,
    schema: RESULT_SCHEMA,
    meta: {
      ...clientSettingsInClient(old.meta),
      levels_run: old.meta.levels_run.map(({ concurrency, ...level }) => ({ value: concurrency, ...level })),
    },
    // A summary cut down to its meta (report rebuilds the rest from the records) has no levels.
    levels: (old.levels ?? []).map((level) => valueWithMode(level, mode)),
    saturation: old.saturation == null ? null : valueWithMode(old.saturation, mode),
    capacity: old.capacity == null ? null : valueWithMode(old.capacity, mode),
  }
}

/** A /1 level value named as /2 names it: `concurrency` becomes `value`, with the mode beside it. */
function valueWithMode<T extends { concurrency: number }>(
  { concurrency, ...rest }: T,
  mode: LoadMode,
): { value: number; mode: LoadMode } & Omit<T, 'concurrency'> {
  return { value: concurrency, mode, ...rest }
}

/**
 * The percentile figures results written before issue 37 spelt unit first, each with the name it
 * has now: percentile, then unit, as every other figure and the --slo, --precision and
 * --max-regression keys spell them. Only these were ever written the other way round.
 */
const UNIT_FIRST_PERCENTILES: Readonly<Record<string, string>> = {
  ttft_ms_p50: 'ttft_p50_ms',
  ttft_ms_p90: 'ttft_p90_ms',
  ttft_ms_p95: 'ttft_p95_ms',
  tpot_ms_p50: 'tpot_p50_ms',
  jct_ms_p50: 'jct_p50_ms',
  jct_ms_p90: 'jct_p90_ms',
  jct_without_tools_ms_p50: 'jct_without_tools_p50_ms',
  jct_without_tools_ms_p90: 'jct_without_tools_p90_ms',
}

/** A figure object with every unit-first percentile renamed, in place in the key order, so an upgraded file reads like a new one. */
function renamed<T>(figures: T): T {
  if (typeof figures !== 'object' || figures === null) return figures
  const keys = Object.keys(figures)
  if (!keys.some((key) => key in UNIT_FIRST_PERCENTILES)) return figures
  return Object.fromEntries(
    Object.entries(figures).map(([key, value]) => [UNIT_FIRST_PERCENTILES[key] ?? key, value]),
  ) as T
}

/**
 * A result with its per-turn, per-job, per-depth, cache-effect and per-target percentiles spelt
 * percentile first (`ttft_p50_ms`); a result that already spells them so is returned as it is.
 * The objects that held them are the only ones renamed: a level's own figures never had them.
 */
function percentileBeforeUnit(result: BenchResult): BenchResult {
  // A summary cut down to its meta has no levels.
  const levels = (result.levels ?? []).map((level) => {
    const { turns, jobs, cache_effect } = level
    return {
      ...level,
      ...(turns == null ? {} : { turns: turns.map(renamed) }),
      ...(jobs == null ? {} : { jobs: jobsRenamed(jobs) }),
      ...(cache_effect == null ? {} : { cache_effect: cache_effect.map(renamed) }),
    }
  })
  const targets = result.targets?.map((target) => ({ ...target, levels: target.levels.map(renamed) }))
  return { ...result, levels, ...(targets === undefined ? {} : { targets }) }
}

/** A level's job figures renamed, with the figures per depth inside them (absent in the first job results). */
function jobsRenamed(jobs: NonNullable<LevelSummary['jobs']>): NonNullable<LevelSummary['jobs']> {
  const figures = renamed(jobs)
  return figures.by_depth == null ? figures : { ...figures, by_depth: figures.by_depth.map(renamed) }
}
