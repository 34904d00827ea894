/**
 * The normalized run configuration: what every layer (defaults, settings.json, config.toml, flags)
 * resolves to. Durations are in seconds where the name says `_s`.
 */
export interface RunConfig {
  target: {
    /** As the user wrote it, trailing slash removed; may or may not end in /v1. */
    base_url: string
    /** e.g. /v1/chat/completions or /v1/completions */
    endpoint: string
    model: string
    /** Name of the environment variable holding the API key; the key itself never enters the config. */
    api_key_env: string
  }
  client: {
    stream: boolean
    /** Whole-request timeout, seconds. */
    timeout_s: number
    /** TCP (and TLS) connection set-up, seconds. */
    connect_timeout_s: number
    /** Send to first token, seconds; null = only the whole-request timeout. */
    first_token_timeout_s: number | null
    /** Longest silence between two reads of a response, seconds. */
    idle_timeout_s: number
    /** Retries per request; 0 by default so failures are counted, never hidden. */
    retry: number
  }
  load: {
    mode: 'concurrency'
    levels: number[]
    /** Exactly one of requests_per_level and duration_per_level_s is non-null. */
    requests_per_level: number | null
    duration_per_level_s: number | null
    warmup_requests: number
  }
  workload: {
    input_tokens: number
    output_tokens: number
  }
  metrics: {
    percentiles: number[]
    record_ttft: boolean
    record_tpot: boolean
    record_throughput: boolean
    /** File name of the summary inside the result folder. */
    output_json: string
    /** Service-level objectives, e.g. { ttft_p95_ms: 800, tpot_p95_ms: 50 }; empty = none. */
    slo: Record<string, number>
  }
  run: {
    /** The result folder itself; null = results/<timestamp>-<model>/ */
    out_dir: string | null
    preflight: boolean
    /** Load-generating worker threads: a number, or 'auto' (one per core, at most one per stream). */
    workers: number | 'auto'
    /** Exit 1 when no level meets every SLO. */
    fail_on_slo: boolean
    /** Bisect around the knee with extra levels before the report. */
    refine: boolean
    /** Folder whose history.jsonl gets this run's summary appended; null = none. */
    history_dir: string | null
  }
}

/** Values given as CLI flags; each one present overrides the same setting from any file. */
export interface ConfigFlags {
  base_url?: string
  endpoint?: string
  model?: string
  api_key_env?: string
  levels?: number[]
  requests?: number
  duration?: number
  warmup?: number
  input_tokens?: number
  output_tokens?: number
  timeout?: number
  connect_timeout?: number
  first_token_timeout?: number
  idle_timeout?: number
  retry?: number
  out?: string
  preflight?: boolean
  stream?: boolean
  workers?: number | 'auto'
  slo?: Record<string, number>
  fail_on_slo?: boolean
  refine?: boolean
  history?: string
}
