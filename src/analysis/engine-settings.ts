/**
 * The settings to look at for each cause of a knee, in the words of the engine the run talked to:
 * its own flags, never another engine's (a llama.cpp server told to try vLLM's
 * --enable-chunked-prefill learns nothing). The engine is what the server said it is before the run
 * (meta.server.engine); unknown, the advice names the knob and each engine's flag for it.
 *
 * Flags as the engines document them: llama.cpp's llama-server --help (the kit's build), vLLM's
 * engine arguments, SGLang's server arguments, TGI's text-generation-launcher arguments.
 */

export type Engine = 'llama.cpp' | 'vllm' | 'sglang' | 'tgi'

/** The knobs a knee's cause points at. */
export type Knob = 'batch-size' | 'kv-cache' | 'before-engine' | 'prefill-chunking' | 'metrics'

type PerEngine = Record<Engine, string> & { generic: string }

const SETTINGS: Record<Knob, PerEngine> = {
  'batch-size': {
    'llama.cpp':
      'the batch size: llama.cpp --parallel (-np, the slots; each gets --ctx-size / slots tokens of context, so raise ' +
      '--ctx-size with it; on CPU, --threads too; --cont-batching is on by default)',
    vllm: 'the batch size: vLLM --max-num-seqs (and --max-num-batched-tokens, the tokens one step may hold)',
    sglang: 'the batch size: SGLang --max-running-requests',
    tgi: 'the batch size: TGI --max-batch-total-tokens (the batch is bounded in tokens) and --max-concurrent-requests',
    // Worded as before engines were told apart: stored results re-rendered by `report` say the same.
    generic: 'the batch size: vLLM --max-num-seqs, SGLang --max-running-requests, llama.cpp --parallel',
  },
  'kv-cache': {
    'llama.cpp':
      'llama.cpp --ctx-size (shared by the --parallel slots: a larger one, or fewer slots, gives each more), shorter outputs',
    vllm: 'vLLM --gpu-memory-utilization (or a smaller --max-model-len, shorter outputs, more GPUs)',
    sglang: 'SGLang --mem-fraction-static (or shorter outputs, more GPUs)',
    tgi: 'TGI --max-batch-total-tokens (the KV cache it may fill; or shorter outputs, more GPUs)',
    generic:
      'llama.cpp --ctx-size, vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, TGI --max-batch-total-tokens ' +
      '(or shorter outputs, more GPUs)',
  },
  'before-engine': {
    'llama.cpp':
      'the layer in front of the engine: llama.cpp --parallel (requests beyond the slots wait in its HTTP threads, ' +
      '--threads-http), a proxy or gateway connection limit',
    vllm: "the layer in front of the engine: a proxy or gateway connection limit, vLLM's API server (tokenization)",
    sglang:
      "the layer in front of the engine: a proxy or gateway connection limit, SGLang's tokenizer manager",
    tgi: "the layer in front of the engine: TGI's router (--max-concurrent-requests), a proxy or gateway connection limit",
    generic:
      'the layer in front of the engine: a proxy or gateway connection limit, the HTTP server (llama.cpp --parallel ' +
      'and --threads-http, TGI --max-concurrent-requests)',
  },
  'prefill-chunking': {
    'llama.cpp':
      'llama.cpp --ubatch-size and --batch-size (the prompt tokens one step computes: smaller steps stall decode less)',
    vllm: 'chunked prefill: vLLM --enable-chunked-prefill and --max-num-batched-tokens',
    sglang: 'chunked prefill: SGLang --chunked-prefill-size',
    tgi: 'TGI --max-batch-prefill-tokens (the prompt tokens one prefill may hold)',
    generic:
      'the prompt tokens one step computes (llama.cpp --ubatch-size, vLLM --enable-chunked-prefill and ' +
      '--max-num-batched-tokens, SGLang --chunked-prefill-size, TGI --max-batch-prefill-tokens)',
  },
  metrics: {
    'llama.cpp': 'start llama-server with --metrics, or point --server-metrics at its /metrics',
    vllm: 'point --server-metrics at vLLM /metrics',
    sglang: 'start SGLang with --enable-metrics, or point --server-metrics at its /metrics',
    tgi: 'point --server-metrics at TGI /metrics',
    generic: 'expose /metrics (vLLM, SGLang, TGI, llama.cpp --metrics) or point --server-metrics at it',
  },
}

/** The setting behind `knob`, for `engine` (null: not recognised, each engine's flag named). */
export function engineSetting(knob: Knob, engine: Engine | null): string {
  const settings = SETTINGS[knob]
  return engine === null ? settings.generic : settings[engine]
}
