import { TOOL_VERSION } from '../../version.js'

export const COMMANDS_HELP = `llmbench ${TOOL_VERSION}: load-test OpenAI-compatible LLM endpoints with a concurrency gradient.

Usage: llmbench <command> [flags]     (llmbench <command> --help for its flags and defaults)
       llmbench --version | -V        (the version alone)

Commands:
  run      the concurrency gradient against an endpoint; writes the result folder
  demo     start the built-in simulator and run a short gradient against it (no key, no GPU)
  sim      the built-in OpenAI-compatible simulator, standalone
  report   rewrite bench_result.json, summary.md, charts/ and report.html from a result folder's records; --history DIR for the trend
  compare  BASE NEW: per-level differences with intervals; exit 1 on a regression, 5 when inconclusive (CI gate)
  model    DIR: the capacity model fitted on a run (slots, prefill, decode step), each parameter with its interval
  predict  DIR --input-tokens N --output-tokens N: another workload from that model, with intervals; --confirm measures it
  merge    SHARD_DIR... --out DIR: one exact result from the shards of a run (run --shard I/N)
  coordinate  --shards N: one clock and one start per level for the shards (run --shard I/N --coordinator URL)
  k8s-manifest  --shards N -c FILE...: a Kubernetes Indexed Job that runs the shards
  check    one streamed request, tokens as they arrive, TTFT/TPOT/usage; says what is wrong (exit 3)
  models   list the model ids the server serves (GET /v1/models)
  init     write settings.json (plain JSON, keys explained on the terminal) and a commented config.toml

Exit codes: 0 ok, 1 a gate failed, 2 usage or configuration error, 3 preflight failed, 4 disk full, 5 compare inconclusive, 6 a coordinated run lost a shard, 130 interrupted.
`
