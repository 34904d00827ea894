/**
 * What each figure means, written into every bench_result.json so a reader never has to guess,
 * with the names other tools use for the same quantity (they do not agree with each other).
 */
export const DEFINITIONS = {
  ttft_ms:
    'Time to first token: from sending the request to the arrival of the first token-bearing SSE event ' +
    '(content, reasoning_content, refusal, text or a tool-call delta; role-only and empty chunks do not count). ' +
    'Same as vLLM, GuideLLM and AIPerf TTFT.',
  tpot_ms:
    'Time per output token, first token excluded, per request: (e2e - ttft) / (output_tokens - 1); requests with ' +
    'fewer than 2 output tokens have none. Same as vLLM TPOT; GuideLLM and AIPerf call this inter-token latency (ITL).',
  itl_ms:
    'Inter-token latency: every gap between consecutive token-bearing events of a request, pooled over requests. ' +
    'Same as vLLM per-gap ITL. One event may carry several tokens, so ITL >= TPOT when servers batch tokens per chunk.',
  e2e_ms: 'End-to-end latency: from sending the request to the end of the response body.',
  output_tokens_per_s:
    'Sum of output tokens of successful requests / level wall window (first send to last response end), seconds: ' +
    'the whole window, ramp-up and drain included.',
  output_tokens_per_s_steady:
    'Output tokens that arrived within the steady window / its length, seconds (a request straddling an edge counts ' +
    'the share of its token events inside); the same as output_tokens_per_s when the level has no steady window. ' +
    'The knee is judged on this figure.',
  steady_window:
    'The part of a level where it held its streams: from the first moment at least 90% of its nominal concurrency ' +
    'was in flight to the last moment it fell below that (brief dips between one request and the next are inside), ' +
    "seconds after the level's first send, with the mean requests in flight over it. Null when the level never " +
    'held 90% of its streams, or held them for under a quarter of its window (then the whole window is used).',
  achieved_concurrency:
    'Requests in flight (sent, not yet ended) over the level wall window, from the records: time-averaged mean and ' +
    'maximum. Below the nominal concurrency when the level ramps up and drains, or had fewer requests than streams; ' +
    'the knee and verdicts scale by what was achieved.',
  requests_per_s: 'Successful requests / level wall window, seconds.',
  success_rate: 'ok / requests; failed requests are kept in the records with their error class.',
  output_tokens:
    'From the server usage (stream_options.include_usage) when sent, else counted with the offline tokenizer ' +
    '(o200k_base); token_counting says how many requests used each, and the mean tokenizer-vs-usage discrepancy.',
  percentiles:
    'Exact over the raw samples of successful requests, linear interpolation between closest ranks (numpy default).',
  timestamps: 'performance.now() (monotonic), taken when the bytes arrive, before parsing.',
} as const
