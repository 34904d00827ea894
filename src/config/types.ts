import type { Protocol } from '../protocols/names.js'
import type { ArrivalProcess } from '../schedule/arrivals.js'
import type { LengthSpec } from '../workload/lengths.js'
import type { AuthMode } from './auth-mode.js'
import type { CacheResetMode } from './cache-reset-mode.js'
import type { PairedMode } from './paired-mode.js'

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
    /**
     * The wire protocol: given, or inferred from the endpoint. When only the protocol is given, the
     * endpoint is the protocol's own path (protocolOf(protocol).path), so the two always agree.
     */
    protocol: Protocol
    model: string
    /**
     * Several endpoints in one run: URLs beside base_url, each sent the same requests (the same path
     * and bodies). A plain URL is sent the run's key and headers; an entry may name its own
     * (MoreEndpoint). Empty = base_url alone. A level's streams (or arrivals) are split between them.
     */
    more_base_urls: MoreBaseUrl[]
    /** One weight per endpoint (base_url first, then more_base_urls); [] = equal shares. */
    endpoint_weights: number[]
    /** Several models (or LoRA adapters) in one run: ids beside model; each endpoint is sent every model. */
    more_models: string[]
    /** One weight per model (model first, then more_models); [] = equal shares. */
    model_weights: number[]
    /** Name of the environment variable holding the API key; the key itself never enters the config. */
    api_key_env: string
    /**
     * A key stored in another tool's config file (Claude Code's env.ANTHROPIC_AUTH_TOKEN, Codex's
     * experimental_bearer_token): the file and the key path, read when the endpoint is resolved, so the
     * key itself never enters the config. Null = the key comes from api_key_env.
     */
    api_key_file: { file: string; path: string[] } | null
    /** Where the key goes: auto, bearer, api-key (Azure OpenAI), x-api-key (Anthropic) or none. */
    auth: AuthMode
    /** Extra headers of every request, names in lower case. Secret-looking values are never printed. */
    headers: Record<string, string>
    /** Headers whose value is read from an environment variable when the run starts: name → variable. */
    env_headers: Record<string, string>
  }
  client: {
    stream: boolean
    /** Whole-request timeout, seconds (in ms, as everything that times a request takes it: requestTimeoutMs). */
    timeout_s: number
    /** TCP (and TLS) connection set-up, seconds. */
    connect_timeout_s: number
    /** Send to first token, seconds; null = only the whole-request timeout. */
    first_token_timeout_s: number | null
    /** Longest silence between two reads of a response, seconds. */
    idle_timeout_s: number
    /** Retries per request; 0 by default so failures are counted, never hidden. */
    retry: number
    /** Reuse connections between requests (HTTP keep-alive); false = a new connection per request. */
    keepalive: boolean
    /** Honour HTTP_PROXY, HTTPS_PROXY and NO_PROXY (client/proxy.ts); false = connect directly. */
    proxy: boolean
  }
  load: {
    /** concurrency: a closed loop per level (levels). request_rate: an open loop per level (rates). */
    mode: 'concurrency' | 'request_rate'
    levels: number[]
    /** Requests per second of each level in request_rate mode. */
    rates: number[]
    arrival: ArrivalProcess
    /** Gamma shape for arrival = gamma: below 1 burstier than Poisson, above 1 smoother. */
    burstiness: number
    /** request_rate mode: most requests in flight at once; later arrivals wait (and it shows). */
    max_in_flight: number
    /** Timed levels: seconds excluded before the measured window ... */
    warmup_s: number
    /** ... and after it (the load goes on so the window's last requests finish under load). */
    cooldown_s: number
    /** Exactly one of requests_per_level and duration_per_level_s is non-null. */
    requests_per_level: number | null
    duration_per_level_s: number | null
    /**
     * --precision: figure key (metrics/precision-key.ts) → target relative half-width of its 95%
     * interval, percent. A level keeps sending past requests_per_level (its floor) until every
     * named figure is that precise, or a ceiling is reached. null = fixed-size levels.
     */
    precision: Record<string, number> | null
    /** With precision: the most requests a level may send; null = PRECISION_CEILING_FACTOR × the floor. */
    max_requests_per_level: number | null
    /** With precision: the longest a level may send, seconds; null = no limit but the request ceiling. */
    max_duration_per_level_s: number | null
    /**
     * With precision: stop a level as soon as its figures cannot reach their targets within its
     * ceilings (projected from the half-widths so far), rather than run to the ceiling. Set for
     * levels no source sized (the default precision); absent = run to the ceiling.
     */
    stop_out_of_reach?: boolean
    warmup_requests: number
    /** Concurrency gradients: measure the first level again, briefly, after the last (analysis/drift.ts). */
    control: boolean
    /** --repeat: each level run this many times back to back (interleaved by level), 1 = once. */
    repeat: number
    /** Concurrency mode: spread each level's first sends over about one request (no lockstep convoy). */
    stagger: boolean
    /**
     * Share of requests the client aborts mid-stream (0 = none, the default): each closes its
     * connection after cancel_after token-bearing events, as a user who stops a reply does.
     */
    cancel_share: number
    /** When a cancelled request is aborted: "first" (its first token) or after this many token-bearing events. */
    cancel_after: 'first' | number
    /**
     * A continuous ramp instead of steps (concurrency mode): one level whose streams start one after
     * another, evenly over these seconds, from 1 to the highest level given; the knee is read on
     * the ramp (analysis/ramp-knee.ts). null = the levels as steps.
     */
    ramp_s: number | null
  }
  workload: {
    /** Prompt length: fixed, normal, uniform, or the dataset's own. */
    input: LengthSpec
    /** max_tokens per request, drawn the same way. */
    output: LengthSpec
    /** Derived from `input`/`output`: the mean lengths, for plans, estimates and metadata. */
    input_tokens: number
    output_tokens: number
    /** JSONL or ShareGPT JSON file of prompts; null = seeded synthetic prompts. */
    dataset: string | null
    /** The preset or profile file the lengths came from, if any. */
    profile: string | null
    /** o200k, cl100k, or a path to a Hugging Face tokenizer.json. */
    tokenizer: string
    /** Tokens every prompt shares at its start (to test a prefix cache on purpose); 0 = none. */
    shared_prefix: number
    /** Synthetic PNG images with every prompt, "COUNTxWIDTHxHEIGHT" (workload/prompt-image-set.ts); null = none. */
    images: string | null
    /** Synthetic WAV clips with every chat prompt, "COUNTxSECONDS" (workload/prompt-audio-set.ts); null = none. */
    audio: string | null
    /** "builtin" or a JSON Schema file: chat bodies ask for JSON matching it (workload/structured-output.ts); null = none. */
    response_schema: string | null
    /** "builtin" or a file of an OpenAI tools array, sent with every chat request; null = none. */
    tools: string | null
    /** With tools: auto, required, none or a function's name. */
    tool_choice: string
    /** Multi-turn sessions (closed loop): from the dataset's conversations, or synthetic. */
    sessions: boolean
    /** User turns per synthetic session. */
    turns: number
    /** Pause between a session's reply and its next turn, seconds. */
    think_time_s: number
    /** Agentic jobs (closed loop): graphs of turns from a job file (the dataset), or synthetic. */
    jobs: boolean
    /** Synthetic jobs: parallel turns at step 1, joined at step 2. */
    fan_out: number
    /** Synthetic jobs: mean tool wait after a turn with children, seconds (exponential). */
    tool_wait_s: number
    /** Send ignore_eos and min_tokens (vLLM, SGLang, TGI) so outputs reach max_tokens. */
    ignore_eos: boolean
    /** Probe the server's prompt_tokens before the run and correct prompt lengths by its template overhead. */
    calibrate: boolean
    /** Seed of prompts and length draws (and arrival times). */
    seed: number
    /** A serving trace to replay on its own clock (Mooncake JSONL, BurstGPT or Azure CSV); null = none. */
    trace: string | null
    /** One level per speed: the trace's offsets divided by it (2 = twice as fast). */
    trace_speeds: number[]
    /** The replayed window of the trace, in trace seconds from its first row ... */
    trace_start_s: number
    /** ... and its length; null = to the end. */
    trace_duration_s: number | null
    /** At most this many rows of the window; null = all. */
    trace_max_requests: number | null
  }
  /** Prices for the cost estimate before the run and the measured cost after it; null = unknown. */
  pricing: {
    input_per_mtok: number
    output_per_mtok: number
    currency: string
  } | null
  metrics: {
    percentiles: number[]
    record_ttft: boolean
    record_tpot: boolean
    record_throughput: boolean
    /** File name of the summary inside the result folder. */
    output_json: string
    /** Exit 1 when the lowest level's success rate is below this, percent (0 = never). */
    min_success_rate: number
    /** Service-level objectives, e.g. { ttft_p95: 800, tpot_p95: 50 }; empty = none. */
    slo: Record<string, number>
  }
  /** Scraping the server's Prometheus metrics during the run (src/server-metrics/). */
  server_metrics: {
    enabled: boolean
    /** Metrics URLs; "auto" = GET /metrics at the target's origin (dropped quietly when there is none). */
    urls: string[]
    /** Seconds between the scrapes of one URL. */
    interval_s: number
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
    /**
     * Two targets measured in alternating blocks of every level, in a randomized balanced order
     * (run/plan/paired-blocks.ts), so whatever drifts hits both alike; `compare DIR` judges them pair by pair.
     */
    paired: boolean
    /** With paired: blocks that take turns (interleave) or both targets loaded at once (together). */
    paired_mode: PairedMode
    /** With paired: the run ends with compare's paired judgement and its exit code (0 pass, 1 regression, 5 inconclusive). */
    gate: boolean
    /** With gate: --max-regression as `compare` takes it ("ttft_p95=10%,throughput=5%"), replacing the defaults; null = compare's defaults. */
    gate_max_regression: string | null
    /** With gate: --min-change as `compare` takes it ("tpot=1ms"), merged over the defaults; null = the defaults. */
    gate_min_change: string | null
    /**
     * Search for the highest level meeting the SLOs (the knee without SLOs) between the lowest and
     * highest level, instead of running every level (analysis/search.ts).
     */
    search: boolean
    /** The search stops when its bracket is this narrow, in the level's unit; null = one stream, or a twentieth of the top rate. */
    search_tolerance: number | null
    /**
     * Reset the server's prefix/KV cache with the engine's own call before each measured level, or
     * once before the first; 'off' = never (src/run/level/cache-reset.ts).
     */
    reset_cache: CacheResetMode
    /** Folder whose history.jsonl gets this run's summary appended; null = none. */
    history_dir: string | null
    /** Refuse to start (exit 2) when the estimated cost is above this; null = no limit. */
    max_cost: number | null
    /** Also write requests.parquet into the result folder (src/report/exports.ts). */
    export_parquet: boolean
    /**
     * Draw charts/ and report.html when the run ends; false: summary.md and the exports only, the
     * drawing (seconds of CPU) left to `llmbench report DIR`.
     */
    charts: boolean
    /** Serve the client's live metrics for Prometheus on this port during the run; null = off. */
    metrics_port: number | null
    /** The address the live metrics endpoint binds (loopback unless asked). */
    metrics_host: string
  }
}

export type { ConfigFlags } from './settings.js'

/** An endpoint beside base_url: a URL sent the run's key and headers, or an entry naming its own. */
export type MoreBaseUrl = string | MoreEndpoint

/**
 * An endpoint with its own key or headers (a second gateway, another tenant). Each field it leaves
 * out is the run's: no api_key_env = the run's key, no headers = the run's headers.
 */
export interface MoreEndpoint {
  url: string
  /** The environment variable holding this endpoint's key (never the key itself). */
  api_key_env?: string
  /** This endpoint's extra headers, in place of the run's; names in lower case. */
  headers?: Record<string, string>
  /** This endpoint's headers read from environment variables, in place of the run's. */
  env_headers?: Record<string, string>
}
