import type { SearchPlan } from '../analysis/search.js'
import type { ProxyMeta } from '../client/proxy.js'
import type { LevelClientStats } from '../metrics/client-health.js'
import type { FluidityDeadlines } from '../metrics/fluidity.js'
import type { LevelPrecision } from '../metrics/precision.js'
import type { LoadMode } from '../metrics/summarize.js'
import type { RunSplitMeta } from '../metrics/target-levels.js'
import type { Prices } from '../metrics/workload-figures.js'
import type { Protocol } from '../protocols/names.js'
import type { TraceMeta } from '../workload/trace-replay.js'
import type { ServerSelf } from './server-self.js'

/** What a run was: everything besides the records that a report needs. */
export interface RunMeta {
  tool_version: string
  /** This run's id, also on each of its records; absent in results written before ids existed. */
  run_id?: string
  started_at: string
  finished_at: string | null
  /** True when the run was interrupted or is still going: levels may be missing. */
  partial: boolean
  /** `protocol` is absent in results written before protocols (they were chat or completions). */
  target: { base_url: string; endpoint: string; model: string; protocol?: Protocol }
  /** The fluidity index's deadlines, from the warm probes (metrics/fluidity.ts); absent without them. */
  fluidity?: FluidityDeadlines
  /** Several endpoints or models (more_base_urls, more_models): each with its weight; absent with one of each. */
  split?: RunSplitMeta
  workload: {
    /** Mean requested lengths (the plan's, over its prompts). */
    input_tokens: number
    output_tokens: number
    /** The length settings as written: "256", "normal(512, 64)", "dataset", ... */
    input?: string
    output?: string
    dataset: string
    tokenizer: string
    stream: boolean
    profile?: string | null
    shared_prefix?: number
    ignore_eos?: boolean
    seed?: number
    /** Prompt-length calibration against the server's usage.prompt_tokens, or why there was none. */
    calibration?: Calibration | { skipped: string } | null
    /** Session runs (--sessions): the turns of synthetic sessions (null: the dataset's) and the think time. */
    sessions?: { turns: number | null; think_time_s: number }
    /** Job runs (--jobs): the synthetic jobs' steps, fan-out and mean tool wait (null: a job file's own). */
    jobs?: { steps: number | null; fan_out: number | null; tool_wait_s: number | null }
    /** --images as given ("2x448x448"); absent without images. */
    images?: string
    /** --audio as given ("1x5"); absent without. */
    audio?: string
    /** --response-schema and --tools as given; absent without. */
    response_schema?: string
    tools?: string
    tool_choice?: string
  }
  load: {
    mode: LoadMode
    /** The level values: streams, or requests per second in request_rate mode. */
    levels: number[]
    arrival?: string
    burstiness?: number
    max_in_flight?: number
    requests_per_level?: number
    /** --precision: targets (figure → percent) and the ceilings; requests_per_level is the floor. */
    precision?: { targets: Record<string, number>; max_requests: number; max_duration_s: number | null }
    duration_per_level?: number
    warmup_s?: number
    cooldown_s?: number
    warmup_requests: number
    /** --repeat: runs of each level, interleaved by level; absent = 1 (and in results of older versions). */
    repeat?: number
    /** Concurrency mode: how each level's streams start (staggered, or all at once with --no-stagger). */
    stagger?: StaggerMeta
    /** --search: what it looked for, its range and tolerance; `levels` is then its bracket's ladder. Absent otherwise. */
    search?: SearchPlan
    /**
     * --ramp: the one level's streams rose linearly from `from` to `to` over `seconds` (one started
     * every seconds / to); the knee is read on the ramp (result.ramp). Absent for steps.
     */
    ramp?: { from: number; to: number; seconds: number }
  }
  /** Prices the cost figures use; null or absent = none given. */
  pricing?: Prices | null
  /** The plan's estimate before the run (requests, tokens, cost). */
  estimate?: CostEstimate | null
  /** Every request sent (warm-up, probes and failures included): what the endpoint billed. */
  totals?: { requests: number; input_tokens: number; output_tokens: number }
  /**
   * The client: its [client] settings the run used (results written before they moved here had
   * `timeout_s` and `retry` in `load`; upgradeResult moves them), the threads and the machine.
   */
  client: {
    /** The whole-request timeout, seconds: a failed request's latency in error-adjusted figures. */
    timeout_s: number
    /** Retries per failed request. */
    retry: number
    workers: number
    architecture: string
    node_version: string
    cpus: number
    host: string
    /** Connection reuse, and whether the server was seen closing after responses; absent in older results. */
    connections?: ConnectionPolicy
    /** The proxy the run's requests went through (HTTPS_PROXY/HTTP_PROXY); absent = straight to the server. */
    proxy?: ProxyMeta
  }
  /**
   * Scraping the server's /metrics: the seconds between two scrapes of a URL, which the server's
   * figures (levels[].server) were sampled at; null = scraping was off; absent in older results.
   */
  server_metrics?: { interval_s: number } | null
  percentiles: number[]
  /** Service-level objectives the run was judged against ({} = none). */
  slo: Record<string, number>
  /** Levels actually run, in order (their values, in load.mode), with how the client's own threads fared during each. */
  levels_run: {
    value: number
    workers: number
    client: LevelClientStats
    /** The level was cut short by an interrupt: shown, not judged; absent otherwise. */
    interrupted?: boolean
    /** --precision: what the level reached and why it stopped (levels[].precision); absent otherwise. */
    precision?: LevelPrecision
  }[]
  /** performance.timeOrigin of the run's process: record times + this = wall-clock ms (for merging shards). */
  time_origin_ms?: number
  /** What the server said about itself before the run (slots, context); null = nothing answered, or no preflight and no --reset-cache; absent in older results. */
  server?: ServerSelf | null
  /** --reset-cache: the engine's call that emptied its prefix cache, and each reset; absent = no resets. */
  cache_reset?: CacheResetMeta
  /** Set on the result of `llmbench merge`: the shards and how well their levels overlapped. */
  merged?: MergeInfo
  /** Set when this result is one shard of a run spread over several processes or machines. */
  shard?: ShardInfo
  /** --trace: the file, its format, the rows and window replayed, one level per speed. */
  trace?: TraceMeta
}

/** Prompt-length calibration against the server (run/setup/calibrate.ts): server tokens = slope × local + offset. */
export interface Calibration {
  slope: number
  offset: number
  probes: { local: number; server: number }[]
  /** The check: a prompt sized for `requested` server tokens, and what the server counted. */
  check: { requested: number; server: number } | null
  /** One line for the terminal and the result. */
  summary: string
}

/** How a run used connections (meta.client.connections). */
export interface ConnectionPolicy {
  /** The setting: reuse connections ([client] keepalive, --no-keepalive). */
  keepalive: boolean
  /**
   * The server closed connections right after responses although its headers said keep-alive, so
   * connections were not reused from then on: seen by the probes before the load, by the load
   * threads, or not at all (null).
   */
  server_closes_after_response: 'probes' | 'load' | null
}

/**
 * The run's size before it starts: requests, tokens and (with prices) cost. Real endpoints bill
 * every token, warm-up included, so the plan says what it will spend and `--max-cost` can refuse.
 */
export interface CostEstimate {
  requests: number
  input_tokens: number
  output_tokens: number
  /** null without prices. */
  cost: number | null
  currency: string | null
  /** How the request count was reached, in words; says so when it is a projection. */
  basis: string
  /** The range the warm probes' spread allows (fewest, most); absent = exact or one figure. */
  requests_range?: [number, number]
  cost_range?: [number, number]
  /** The whole run's seconds from the probes' median request, and its range; absent = no probes. */
  duration_s?: number | null
  duration_s_range?: [number, number]
  /**
   * One planned request's seconds from the warm probes: median and range; prefill_s, the part of it
   * that is prefill at the planned prompt length (from the length probe), which concurrent requests
   * do not overlap.
   */
  request_seconds?: { median: number; low: number; high: number; prefill_s?: number }
}

/**
 * One shard of a run spread over several processes or machines: shard `index` of `count` runs its
 * share of every level, starting each level at the shared wall-clock schedule.
 */
export interface ShardInfo {
  index: number
  count: number
  host: string
  /** Wall-clock time all shards start their first level at (ISO). */
  start_at: string | null
  /**
   * This host's clock offset estimate against the target server, ms (server Date header minus the
   * local midpoint of the request); null when the server sent no Date. Date has 1 s resolution, so
   * this catches a badly wrong clock, not milliseconds.
   */
  clock_offset_ms: number | null
  /** Digest of everything that must be equal across shards to merge them. */
  config_digest: string
  /** --coordinator: this shard's clock against the coordinator's and its levels as coordinated; absent without. */
  coordinator?: ShardCoordination
}

/** What ended a coordinated level or run before its time (run/shard/coordination-protocol.ts). */
export interface CoordinationCut {
  /** The shard lost; null when the run ended for another reason (the coordinator lost, a disagreement). */
  shard: number | null
  /** When it was seen, on the coordinator's clock (ms since the epoch). */
  at_ms: number
  reason: string
}

/** A shard's account of the coordination (meta.shard.coordinator). */
export interface ShardCoordination {
  url: string
  /** Coordinator clock minus this shard's, ms (best of several exchanges, NTP style). */
  offset_ms: number
  /** The true offset is within offset_ms ± bound_ms (half the exchange's round trip). */
  bound_ms: number
  rtt_ms: number
  levels: {
    /** 0-based position in the run. */
    level: number
    value: number
    /** The instant given to every shard, coordinator clock (ms since the epoch). */
    start_at_ms: number
    /** When this shard released the level, coordinator clock. */
    started_ms: number
    /** Every shard finished it; false = cut (see incomplete); null = still running. */
    complete: boolean | null
    incomplete: CoordinationCut | null
  }[]
  /** What ended the run early; null = it was not. */
  ended: CoordinationCut | null
}

export interface MergeInfo {
  shards: {
    index: number
    host: string
    dir: string
    records: number
    clock_offset_ms: number | null
    /** Coordinator clock minus this shard's, ms, and its bound: how its records were aligned; null without a coordinator. */
    coordinator_offset_ms?: number | null
    coordinator_bound_ms?: number | null
  }[]
  config_digest: string
  overlap: LevelOverlap[]
  /**
   * What the merged timeline rests on: `coordinator` = each shard's records moved by its measured
   * offset; `wall-clock` = the hosts' clocks trusted as they were (no coordinator).
   */
  time_base?: 'coordinator' | 'wall-clock'
  /**
   * How far apart two shards' records can be, at most, from where they were on one clock: the sum
   * of the two largest offset bounds, ms; null when the time base is the wall clock (not known).
   */
  alignment_error_ms?: number | null
  /** Levels a coordinator marked incomplete (a shard lost mid-level): shown, never judged. */
  incomplete?: { level: number; shard: number | null; at: string; reason: string }[]
}

/** How well the shards' measured windows of one level overlapped. */
export interface LevelOverlap {
  level: number
  /** Common time of all shards' windows over the span from the first start to the last end (0..1). */
  ratio: number
  /** Each shard's measured window, ms on the merged clock (the first shard's). */
  windows: { shard: number; start_ms: number; end_ms: number }[]
  /** The ratio is below the merge's minimum (MIN_OVERLAP): the shards did not load the server together for all of it. */
  flagged?: boolean
}

/** How a closed-loop level's streams start: their first sends spread over `spread_ms` (0 = at once). */
export interface StaggerMeta {
  spread_ms: number
  /** Where the spread comes from: the warm probes' projected request, a default, or off. */
  from: 'probes' | 'default' | 'off'
  /** The run description's sentence. */
  note: string
}

/** --reset-cache (run/level/cache-reset.ts): what was called, and when. */
export interface CacheResetMeta {
  mode: 'before-level' | 'before-run'
  /** The engine the server said it is, whose call was used. */
  engine: 'llama.cpp' | 'vllm' | 'sglang'
  /** The call in words: "POST /slots/{id}?action=erase", "POST /flush_cache", "POST /reset_prefix_cache". */
  call: string
  /** Requests one reset sends: llama.cpp's slots, else 1. */
  calls_per_reset: number
  /** The run description's sentence: "cache reset before each level via ...". */
  note: string
  /**
   * Each reset: what it came before ("c=4", "c=4 run 2", "control", "the first level"), when it was sent, how
   * long all its calls took; `error` when it failed (the level then ran on a cache not reset).
   */
  resets: { before: string; at: string; ms: number; error?: string }[]
}
