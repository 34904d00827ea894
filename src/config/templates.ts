/**
 * Skeletons written by `llmbench init`: the two files of docs/configuration.md, with placeholder values
 * that load cleanly as they are (a test loads both). Replace base_url and model before a real run.
 */

/** settings.json. JSON has no comments: INIT_NOTES, printed by `init`, explains each key. */
export const SETTINGS_JSON_TEMPLATE = `{
  "llm": {
    "base_url": "http://127.0.0.1:8000/v1",
    "api_key_env": "OPENAI_API_KEY",
    "model": "your-model-id",
    "timeout_seconds": 120,
    "stream": true
  },
  "bench": {
    "concurrency_levels": [1, 4, 8, 16, 32, 64],
    "requests_per_level": 40,
    "warmup_requests": 5,
    "input_tokens": 256,
    "output_tokens": 512,
    "percentiles": [50, 95, 99]
  }
}
`

/** Printed by `init` next to settings.json, one line per key. */
export const INIT_NOTES = `settings.json keys (all optional; config.toml and flags override them):
  llm.base_url              server URL, with or without a trailing /v1 (no default: required)
  llm.api_key_env           NAME of the environment variable holding the API key (default OPENAI_API_KEY);
                            the key itself never goes in a file
  llm.model                 model id as the server lists it (\`llmbench models\`; no default: required)
  llm.timeout_seconds       whole-request timeout in seconds (default 120)
  llm.stream                stream responses; needed to measure TTFT and TPOT (default true)
  llm.keepalive             reuse connections between requests (default true; false = one per request)
  llm.endpoint              optional, path of the API (default /v1/chat/completions)
  bench.concurrency_levels  concurrent requests per level, e.g. [1, 4, 8] (default [1, 4, 8, 16, 32, 64])
  bench.requests_per_level  requests measured at each level (default 40)
  bench.duration_per_level  optional, seconds per level instead of a request count (not both)
  bench.warmup_requests     requests sent first and excluded from every figure (default 5)
  bench.input_tokens        prompt length in tokens (default 256)
  bench.output_tokens       tokens to generate per request, i.e. max_tokens (default 512)
  bench.percentiles         percentiles reported for every latency (default [50, 95, 99])
  bench.slo                 optional objectives, e.g. { "ttft_p95_ms": 800, "tpot_p95_ms": 50 }
`

/** config.toml, commented line by line (units and defaults). */
export const CONFIG_TOML_TEMPLATE = `# llmbench config. Every key is optional; flags override this file, and it overrides settings.json.

[target]
base_url = "http://127.0.0.1:8000/v1"   # server URL, with or without /v1 (no default: required)
endpoint = "/v1/chat/completions"       # API path, joined to base_url without doubling /v1
model = "your-model-id"                 # model id as \`llmbench models\` lists it (no default: required)
# api_key_env = "OPENAI_API_KEY"        # NAME of the env variable holding the key; never the key itself

[load]
mode = "concurrency_gradient"           # each concurrency level in turn; "request_rate": an open loop per rate
levels = [1, 4, 8, 16, 32, 64]          # concurrent requests per level
duration_per_level = 30                 # seconds per level (default: 40 requests per level instead)
# requests_per_level = 40               # requests per level instead of a duration (set one, not both)
max_tokens = 512                        # tokens to generate per request (default 512)
# warmup_requests = 5                   # sent first, excluded from every figure (default 5)
# input_tokens = 256                    # prompt length in tokens (default 256)
# rates = [1, 2, 4, 8, 16]              # request_rate mode: requests per second per level
# arrival = "poisson"                   # request_rate mode: constant, poisson or gamma (with burstiness)
# warmup_seconds = 0                    # timed levels: excluded window before the measured one
# cooldown_seconds = 0                  # timed levels: load kept on after it, excluded

# [workload]
# profile = "chat"                      # chat, rag, codegen or a profile file; lengths below override it
# input_tokens = "normal(512, 64)"      # a count, normal(mean, sd), uniform(min, max) or "dataset"
# output_tokens = 512                   # max_tokens, drawn the same way
# dataset = "prompts.jsonl"             # JSONL or ShareGPT JSON prompts instead of synthetic ones
# tokenizer = "o200k"                   # o200k, cl100k or a path to a tokenizer.json
# ignore_eos = false                    # send ignore_eos/min_tokens so outputs reach max_tokens (vLLM, SGLang, TGI)

[metrics]
record_ttft = true                      # time to first token (default true)
record_tpot = true                      # time per output token after the first (default true)
record_throughput = true                # output tokens/s and requests/s (default true)
output_json = "bench_result.json"       # summary file name inside the result folder (default bench_result.json)
# percentiles = [50, 95, 99]            # percentiles for every latency, each in (0, 100] (default [50, 95, 99])
# min_success_rate = 90                 # exit 1 when the lowest level succeeds on fewer, percent; 0 = off (default 90)

[client]
stream = true                           # stream responses; needed for TTFT/TPOT (default true)
timeout = 120                           # whole-request timeout, seconds (default 120)
retry = 0                               # retries per request; 0 so failures are counted, not hidden (default 0)
# workers = "auto"                      # load-generating threads: a number or "auto" (one per core)
# connect_timeout = 10                  # connection set-up timeout, seconds (default 10)
# first_token_timeout = 60              # send-to-first-token timeout, seconds (default: the whole-request one)
# idle_timeout = 60                     # longest silence between two reads, seconds (default 60)
# keepalive = true                      # reuse connections; false = a new one per request (default true)

# [pricing]                             # prices for the cost estimate and the measured cost
# input_per_mtok = 3.0                  # per million input tokens
# output_per_mtok = 15.0                # per million output tokens
# currency = "USD"
# max_cost = 5                          # refuse to start a run estimated above this (exit 2)

# [slo]                                 # objectives: per level, goodput and whether it meets them
# ttft_p95_ms = 800                     # metric ttft, tpot or e2e; any percentile; milliseconds
# tpot_p95_ms = 50
`
