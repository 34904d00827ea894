/**
 * What each figure means, written into every bench_result.json so a reader never has to guess,
 * with the names other tools use for the same quantity (they do not agree with each other).
 */
export const DEFINITIONS = {
  value:
    "A level's value (levels[].value, saturation.value, capacity.value, meta.levels_run[].value): streams held " +
    'in concurrency mode (a closed loop), requests sent per second in request_rate mode (an open loop); mode ' +
    'beside it says which. llmbench.result/1 called it concurrency in both modes.',
  ttft_ms:
    'Time to first token: from sending the request to the arrival of the first token-bearing SSE event ' +
    '(content, reasoning_content, refusal, text or a tool-call delta; role-only and empty chunks do not count). ' +
    'Same as vLLM, GuideLLM and AIPerf TTFT.',
  tpot_ms:
    'Time per output token, first token excluded, per request: (e2e - ttft) / (output_tokens - 1); requests with ' +
    'fewer than 2 output tokens have none; reasoning tokens that usage counted and no event carried (hidden ' +
    'reasoning, see reasoning) came before the first token and are left out. Same as vLLM TPOT; GuideLLM and AIPerf call this inter-token latency (ITL).',
  itl_ms:
    'Inter-token latency: every gap between consecutive token-bearing events of a request, pooled over requests. ' +
    'Same as vLLM per-gap ITL. One event may carry several tokens, so ITL >= TPOT when servers batch tokens per chunk.',
  itl_per_token_ms:
    "Inter-token latency per token: each gap between token-bearing events divided by its request's tokens per " +
    'event (output_tokens / events). Equals itl_ms when every event carries one token.',
  tokens_per_event:
    'Output tokens / token-bearing SSE events over successful streamed requests. Above 1.2 (speculative decoding, ' +
    'batching proxies) the level notes that ITL is per event, not per token.',
  e2e_ms:
    'End-to-end latency: from sending the request to the end of the response body, or to the arrival of ' +
    '`data: [DONE]` when it came: anything after [DONE] is ignored and counted as events_after_done, and a ' +
    'connection held open after it is closed by the client.',
  embeddings:
    'Embeddings runs (protocol embeddings), per level: inputs_per_s = texts embedded by successful requests (one ' +
    'per request) / level wall window, seconds; input_tokens_per_s = their usage.prompt_tokens / the same window. ' +
    'Not streamed and generating nothing, they have no TTFT, TPOT, ITL or output tokens/s: e2e_ms is their latency. ' +
    'AIPerf reports the same as request throughput and input sequence length.',
  output_tokens_per_s:
    'Sum of output tokens of successful requests / level wall window (first send to last response end), seconds: ' +
    'the whole window, ramp-up and drain included.',
  output_tokens_per_s_steady:
    'Output tokens that arrived within the steady window / its length, seconds (a request straddling an edge counts ' +
    'the share of its token events inside); the same as output_tokens_per_s when the level has no steady window. ' +
    'The knee judges a step between two levels on this figure when both have a steady window, on ' +
    'output_tokens_per_s when either has none (never one against the other).',
  steady_window:
    'The part of a level where it held its streams: from the first moment at least 90% of its nominal concurrency ' +
    'was in flight and one request had completed (the synchronized first wave is start-up) to the last moment it ' +
    'fell below that (brief dips between one request and the next are inside), ' +
    "seconds after the level's first send, with the mean requests in flight over it. Null when the level never " +
    'held 90% of its streams, or held them for under a quarter of its window (then the whole window is used).',
  achieved_concurrency:
    'Requests in flight (sent, not yet ended) over the level wall window, from the records: time-averaged mean and ' +
    "maximum, and streams: what they were meant to hold (the level, or one shard's share of it). Below the nominal " +
    'concurrency when the level ramps up and drains, or had fewer requests than streams; the knee and verdicts ' +
    'scale by what was achieved.',
  requests_per_s: 'Successful requests / level wall window, seconds.',
  success_rate: 'ok / requests; failed requests are kept in the records with their error class.',
  output_tokens:
    'From the server usage (stream_options.include_usage) when sent, else counted with the offline tokenizer ' +
    '(o200k_base); token_counting says how many requests used each, and the mean tokenizer-vs-usage discrepancy. ' +
    'Usage is checked first: negative, fractional, far above max_tokens or far from the events and text received, ' +
    'it falls back to the tokenizer (token_counting.usage_rejected; the record keeps both).',
  connections:
    'opened / reused: requests sent on a connection opened for them / kept alive. resent: requests whose first try ' +
    'died on a reused connection before any response byte (the server had closed it) and were resent at once on a ' +
    'new connection; the record is the resend. closed_by_server: connections the server closed right after a ' +
    'response without saying `connection: close`; once seen, connections are no longer reused.',
  non_load_failures:
    'Failed requests of the level whose cause is not load (a 4xx other than 408/429, an unreadable stream, a ' +
    'context-length error, an unreachable host before any answer): their count, cause, top message and what to ' +
    'change. At least half of the requests: the level is misconfigured; fewer: a note, not counted against the ' +
    'level (success_rate still counts them).',
  notes:
    "What a level's records say about the server's stream and connections, in words (resends, closes after " +
    'responses, tokens per event, events after [DONE], usage not trusted); client.notes is about the client.',
  server:
    "The server's own figures over a level, from its Prometheus /metrics scraped during the run (server-metrics.jsonl), " +
    "mapped from the engine's names (vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM/Dynamo, DCGM) to one vocabulary. " +
    'Gauges (running, waiting, kv_cache_usage 0..1, gpu_*): mean and max over the scrapes inside the measured window. ' +
    'Counters (prompt_tokens, generation_tokens, preemptions, gpu_energy_joules): increase from the last scrape ' +
    'answered before the window to the first sent after it (span_s), a drop read as a restart. cache_hit_rate: ' +
    "prefix-cache hits / queries over the level, else the mean of the engine's own rate. Several URLs are added " +
    '(fractions averaged). scrapes/gaps: answered/failed scrapes inside the window.',
  server_bucketed:
    "ttft_ms_bucketed, queue_time_ms_bucketed, e2e_ms_bucketed, itl_ms_bucketed: the increase of the server's " +
    'histogram over the level; percentiles interpolated linearly inside the bucket holding the rank (Prometheus ' +
    'histogram_quantile), so only as precise as the bucket bounds; the mean is exact (sum / count).',
  outside_scheduler_ms:
    "Time outside the engine's scheduler: the client's TTFT p50 minus the server's TTFT p50 (bucket-interpolated): " +
    'network, the HTTP layer and its queue, and the client. Null unless the server publishes a TTFT histogram.',
  knee_cause:
    'saturation.cause: why the knee is where it is, judged on the first level past it from the server figures: ' +
    'client-bound (the client watched itself busy), kv-cache (KV use >= 95% or preemptions), outside-scheduler ' +
    "(at least half of the client's TTFT p50, and 50 ms, spent before the engine while its own queue is empty or holds fewer " +
    'of the waiting requests than wait in front of it: an HTTP layer, slots, a proxy), batch-slots (running flat at its maximum while the queue grows and KV has room), ' +
    'prefill-interference (ITL p99 x1.5), undetermined, or no-server-data. Each names the setting to look at.',
  joules_per_output_token:
    "server.joules_per_output_token: the GPUs' mean power inside the measured window (DCGM) times its length, over " +
    "the level's output tokens; from the energy counter, scaled to the window, when there is no power gauge.",
  in_band:
    "What the engine reported in its own responses, over a level's successful requests: server_prefill_ms = " +
    "llama.cpp's timings.prompt_ms; server_decode_ms_per_token = timings.predicted_ms / predicted_n; queue_ms = " +
    'client TTFT - timings.prompt_ms, the time before the engine started the prefill (HTTP layer, waiting for a ' +
    'slot, network) plus the first token on its way back; cached_prompt_share = cached prompt tokens (timings.cache_n, ' +
    'else usage.prompt_tokens_details.cached_tokens, else usage.prompt_tokens - timings.prompt_n on llama.cpp builds ' +
    'without cache_n) / prompt tokens, over the requests that said; reasoning_tokens ' +
    '= sum of usage.completion_tokens_details.reasoning_tokens. Absent when no request carried any of these.',
  reasoning:
    "levels[].reasoning, a reasoning model's two phases over a level's successful requests, present when any request " +
    'reasoned (reasoning events, or usage.completion_tokens_details.reasoning_tokens above 0). ttft_ms stays the first ' +
    'token of either phase. ttfr_ms: time to first reasoning token, send to the first event carrying reasoning_content ' +
    'or reasoning (only requests whose reasoning arrived as events). ttfo_ms: time to first output token, send to the ' +
    'first event carrying the answer (content, refusal, legacy text or a tool call); equals TTFT for a request that did ' +
    'not reason. AIPerf calls it Time to First Output (TTFO, metric time_to_first_output) and its migration notes call ' +
    "it GenAI-Perf's TTFT; GuideLLM reports it as time_to_first_output_token_ms; a TTFT that reads only delta.content (GuideLLM before " +
    'its issue 737, inference-perf per its issue 559) measures this instead of TTFT; genai-bench TTFT counts ' +
    'reasoning_content, like llmbench ttft_ms. ' +
    'reasoning_tokens: per request, usage.completion_tokens_details.reasoning_tokens when sent (source usage), else the ' +
    'reasoning events when the stream carried one token per event (usage.completion_tokens = events; source events), ' +
    'else the offline tokenizer on the reasoning text (source tokenizer), never above output_tokens; ' +
    'reasoning_token_sources counts requests per source. answer_tokens: output_tokens - reasoning tokens. ' +
    'answer_tpot_ms: (end - first answer token) / (answer_tokens - 1), requests with at least 2 answer tokens. ' +
    'reasoning_hidden: requests whose usage counted reasoning tokens while no reasoning event came (the server thinks ' +
    'without streaming it, as OpenAI o-series models): their TTFT includes the thinking, and a note says so; TPOT, ' +
    'tokens per event, the usage check and the tokenizer-vs-usage discrepancy leave those tokens out, and the ' +
    "comparisons of TTFT with the server's first token (outside_scheduler_ms, in_band.queue_ms, the knee's cause) " +
    'leave those requests out.',
  turns:
    "levels[].turns, session runs (--sessions) only: per turn index (0 = a session's first request, whose prompt " +
    'carries no history), over successful measured requests: requests, ttft_ms_p50/p95, input_tokens_mean (the ' +
    "server's prompt tokens: the history grows each turn), cached_tokens_mean and cached_share (cached prompt tokens, " +
    'counted as for in_band.cached_prompt_share, / prompt tokens). Others call this multi-turn or conversation figures.',
  cache_effect:
    'levels[].cache_effect: successful requests bucketed by the share of their prompt served from the prefix cache ' +
    '([0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1]), each with requests, ttft_ms_p50 and uncached_tokens_mean (the ' +
    'prompt tokens the prefill computed). Absent when no request had a cache hit.',
  percentiles:
    'Exact over the raw samples of successful requests, linear interpolation between closest ranks (numpy default).',
  timestamps: 'performance.now() (monotonic), taken when the bytes arrive, before parsing.',
} as const
