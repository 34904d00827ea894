import {
  aBoolean,
  aCount,
  aList,
  aNumber,
  anObject,
  aString,
  aTable,
  oneOf,
} from '../records/stored-values.js'
import { ERROR_CLASSES } from '../records/types.js'
import { z } from '../zod.js'

/**
 * bench_result.json as it is read back, in the schema it names: /2 as a run writes it, /1 with
 * `concurrency` where /2 has `value` (and no `mode`). What report, compare and merge read is typed,
 * down to each figure of a level; fields added after /1 are optional; keys no version wrote are let
 * through (a newer llmbench may add some). The nested figure groups no reader takes a number from
 * without the records (the server's, the reasoning, the per-turn figures...) are only required to be
 * objects. Built on first use: the commands that never read a result do not pay for it.
 */
export type StoredSchema = 'llmbench.result/1' | 'llmbench.result/2'

const schemas = new Map<StoredSchema, z.ZodType>()

export function storedResultSchema(version: StoredSchema): z.ZodType {
  let schema = schemas.get(version)
  if (schema === undefined) {
    schema = build(version === 'llmbench.result/1')
    schemas.set(version, schema)
  }
  return schema
}

/**
 * The result document: its meta, its levels and what the run concluded from them. Each part is
 * built by its own function below; `v1` names the older schema, whose level value and optional
 * summaries differ.
 */
function build(v1: boolean): z.ZodType {
  const saturation = saturationSchema(v1)
  const capacity = anObject({ ...levelValue(v1, true), reason: aString() })

  // A /1 summary cut down to its meta (report rebuilds the rest from the records) has no levels.
  const loose = <T extends z.ZodType>(schema: T) => (v1 ? schema.optional() : schema)
  return anObject({
    meta: metaSchema(v1),
    definitions: aTable(aString(), 'an object of strings').optional(),
    levels: loose(aList(levelSchema(v1), 'a list of levels')),
    saturation: loose(saturation.nullable()),
    saturation_summary: loose(aString()),
    job_saturation: anObject({
      read_on: aString(),
      value: numberOrNull(),
      confidence: oneOf(['clear', 'uncertain']).nullable(),
      bracket: z.tuple([aNumber(), aNumber()], { error: 'a [low, high] pair of level values' }).nullable(),
      reason: aString(),
    }).optional(),
    capacity: loose(capacity.nullable()),
    capacity_summary: loose(aString().nullable()),
    answer: anObject({
      value: numberOrNull(),
      from: oneOf(['slo', 'knee']).nullable(),
      confidence: oneOf(['clear', 'uncertain']).optional(),
      text: aString(),
    }).optional(),
    advice: loose(strings()),
    cost: loose(
      anObject({
        currency: aString(),
        estimated: numberOrNull(),
        measured: aNumber(),
        total: numberOrNull(),
      }).nullable(),
    ),
    drift: figures().optional(),
    targets: aList(
      anObject({
        endpoint: aString(),
        model: aString(),
        share: aNumber(),
        levels: aList(figures(), "a list of the target's levels"),
        saturation: saturation.nullable(),
        saturation_summary: aString(),
      }),
      'a list of targets',
    ).optional(),
    search: anObject({
      target: oneOf(['slo', 'knee']),
      value: numberOrNull(),
      summary: aString(),
    }).optional(),
    repeats: figures().optional(),
    ramp: figures().optional(),
    model: figures().optional(),
  })
}

/** The load modes: what a level's value counts (concurrent requests, or requests per second). */
const aMode = () => oneOf(['concurrency', 'request_rate'])

/** A level's value as the version names it: /1 `concurrency`, /2 `value` with its `mode` (`modeToo`). */
function levelValue(v1: boolean, modeToo: boolean) {
  return v1
    ? { concurrency: aNumber('a level value (a number)') }
    : { value: aNumber('a level value (a number)'), ...(modeToo ? { mode: aMode() } : {}) }
}

const numberOrNull = () => aNumber('a number or null').nullable()
const strings = () => aList(aString(), 'a list of strings')
const figures = () => anObject({}, 'an object of figures')
const interval = () => anObject({ low: numberOrNull(), high: numberOrNull() }, 'an interval {low, high}')
const throughputInterval = () =>
  anObject(
    { low: numberOrNull(), high: numberOrNull(), slices: aNumber() },
    'an interval {low, high, slices}',
  )
const latencyIntervals = () => aTable(interval(), 'intervals by figure ("p50", "mean")')
const distribution = () =>
  aTable(numberOrNull(), 'a distribution: an object of numbers (count, mean, min, max, percentiles)')

/** `meta`: what was run, against what, from which client, with which settings. */
function metaSchema(v1: boolean): z.ZodType {
  return anObject({
    tool_version: aString(),
    run_id: aString().optional(),
    started_at: aString(),
    finished_at: aString().nullable(),
    partial: aBoolean(),
    target: anObject({
      base_url: aString(),
      endpoint: aString(),
      model: aString(),
      protocol: aString().optional(),
    }),
    workload: anObject({
      input_tokens: aNumber(),
      output_tokens: aNumber(),
      input: aString().optional(),
      output: aString().optional(),
      dataset: aString(),
      tokenizer: aString(),
      stream: aBoolean(),
      profile: aString().nullable().optional(),
      shared_prefix: aCount().optional(),
      ignore_eos: aBoolean().optional(),
      seed: aNumber().optional(),
    }),
    load: anObject({
      // Results written before request-rate mode existed have none: they were closed loops.
      mode: v1 ? aMode().optional() : aMode(),
      levels: aList(aNumber(), 'a list of level values'),
      arrival: aString().optional(),
      burstiness: aNumber().optional(),
      max_in_flight: aCount().optional(),
      requests_per_level: aCount().optional(),
      precision: figures().optional(),
      duration_per_level: aNumber().optional(),
      warmup_s: aNumber().optional(),
      cooldown_s: aNumber().optional(),
      warmup_requests: aCount(),
      repeat: aCount().optional(),
      // Where older versions kept the [client] settings (upgradeResult moves them).
      timeout_s: aNumber().optional(),
      retry: aCount().optional(),
    }),
    client: anObject({
      timeout_s: aNumber().optional(),
      retry: aCount().optional(),
      workers: aCount(),
      architecture: aString(),
      node_version: aString(),
      cpus: aCount(),
      host: aString(),
    }),
    pricing: figures().nullable().optional(),
    estimate: figures().nullable().optional(),
    totals: anObject({ requests: aCount(), input_tokens: aCount(), output_tokens: aCount() }).optional(),
    server_metrics: anObject({ interval_s: aNumber() }).nullable().optional(),
    percentiles: aList(aNumber(), 'a list of percentiles'),
    slo: aTable(aNumber(), 'an object of SLO thresholds (numbers)'),
    levels_run: aList(
      anObject({
        ...levelValue(v1, false),
        workers: aCount(),
        client: anObject({ cpu_percent: aNumber(), loops: aList(figures()) }),
        interrupted: aBoolean().optional(),
        precision: figures().optional(),
      }),
    ),
    time_origin_ms: aNumber().optional(),
    server: figures().nullable().optional(),
    cache_reset: figures().optional(),
    merged: figures().optional(),
    shard: anObject({ index: aCount(), count: aCount() }).optional(),
    trace: figures().optional(),
  })
}

/** One entry of `levels`: a level's counts, latency distributions, throughput and verdict. */
function levelSchema(v1: boolean): z.ZodType {
  return anObject({
    ...levelValue(v1, true),
    requests: aCount(),
    ok: aCount(),
    failed: aCount(),
    success_rate: aNumber(),
    errors: aTable(aCount(), 'an object of counts by error class'),
    error_samples: aList(anObject({ class: oneOf(ERROR_CLASSES), message: aString() })),
    timeouts: aTable(aCount(), 'an object of counts by timeout'),
    ttft_ms: distribution(),
    tpot_ms: distribution(),
    itl_ms: distribution(),
    e2e_ms: distribution(),
    ttft_ms_error_adjusted: distribution(),
    e2e_ms_error_adjusted: distribution(),
    slo: levelSloSchema().nullable(),
    output_tokens_per_s: aNumber(),
    output_tokens_per_s_steady: aNumber(),
    steady_window: anObject({
      start_s: aNumber(),
      end_s: aNumber(),
      mean_in_flight: aNumber(),
      output_tokens_per_s: aNumber(),
    }).nullable(),
    achieved_concurrency: anObject({ mean: aNumber(), max: aNumber() }),
    intervals: levelIntervalsSchema().optional(),
    requests_per_s: aNumber(),
    duration_s: aNumber(),
    output_tokens: aCount(),
    input: figures(),
    output: figures(),
    ttft_ms_from_intended: distribution().nullable(),
    e2e_ms_from_intended: distribution().nullable(),
    schedule: figures().nullable(),
    open_loop: figures().nullable().optional(),
    cost: figures().nullable(),
    token_counting: anObject({ from_usage: aCount(), from_tokenizer: aCount() }),
    connections: figures().optional(),
    network: figures().optional(),
    events: figures().optional(),
    embeddings: figures().optional(),
    in_band: figures().optional(),
    reasoning: figures().optional(),
    turns: aList(figures()).optional(),
    jobs: figures().optional(),
    cache_effect: aList(figures()).optional(),
    speculative: figures().optional(),
    acceptance_length: aNumber().optional(),
    cancellation: figures().optional(),
    cancelled: aCount().optional(),
    notes: strings().optional(),
    client: levelClientSchema(),
    server: figures().nullable().optional(),
    interrupted: aBoolean().optional(),
    precision: figures().optional(),
    verdict: oneOf(['healthy', 'saturated', 'overloaded', 'client-bound', 'misconfigured', 'interrupted']),
    advice: aString(),
  })
}

/** A level's `slo`: each threshold checked, and the goodput of the requests that met them all. */
function levelSloSchema() {
  return anObject({
    checks: aList(
      anObject({ key: aString(), threshold_ms: aNumber(), value_ms: numberOrNull(), met: aBoolean() }),
    ),
    meets: aBoolean(),
    good_share: aNumber(),
    goodput_requests_per_s: aNumber(),
    goodput_tokens_per_s: aNumber(),
  })
}

/**
 * A level's `intervals`, typed because the tables show these numbers. Results of issue 25's build
 * have no methods, itl_ms, mean or effective_n; older ones no intervals at all.
 */
function levelIntervalsSchema() {
  return anObject({
    confidence: aNumber(),
    methods: anObject({ percentiles: aString(), means: aString(), throughput: aString() }).optional(),
    output_tokens_per_s: throughputInterval().nullable(),
    output_tokens_per_s_steady: throughputInterval().nullable(),
    ttft_ms: latencyIntervals(),
    tpot_ms: latencyIntervals(),
    itl_ms: latencyIntervals().optional(),
    e2e_ms: latencyIntervals(),
    effective_n: aTable(
      aTable(aNumber(), 'effective sample sizes by figure'),
      'effective sample sizes',
    ).optional(),
  })
}

/** A level's `client`: whether the load generator itself kept up, and why not. */
function levelClientSchema() {
  return anObject({
    cpu_percent: aNumber(),
    rss_mib: numberOrNull(),
    event_loop_delay_p99_ms: aNumber(),
    event_loop_utilization: aNumber(),
    dispatch_lateness_p99_ms: numberOrNull(),
    effective_concurrency_ratio: numberOrNull(),
    bound: aBoolean(),
    reasons: strings(),
    notes: strings(),
    noisy: aBoolean().optional(),
  })
}

/** `saturation` (and each target's): the level where throughput stopped growing, and why. */
function saturationSchema(v1: boolean): z.ZodType {
  return anObject({
    ...levelValue(v1, true),
    reason: aString(),
    bracket: z
      .tuple([aNumber(), aNumber()], { error: 'a [low, high] pair of level values' })
      .nullable()
      .optional(),
    confidence: oneOf(['clear', 'uncertain']).optional(),
    full_from: aNumber().optional(),
    cause: figures().optional(),
    uncertain: aString().optional(),
  })
}
