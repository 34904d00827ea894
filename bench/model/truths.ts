import { resolveSimParams, type SimParams } from '../../src/model/engine.js'

/** A simulated server of known parameters, for the capacity model's accuracy (bench/model/run.ts, tests). */
export interface Truth {
  name: string
  engine: string
  contextPerSlot: number
  params: SimParams
}

export const GPU_LIKE_TRUTH: Truth = {
  name: 'GPU-like (prefills overlap decoding)',
  engine: 'vllm',
  contextPerSlot: 8192,
  params: resolveSimParams({
    slots: 8,
    prefill_base_ms: 15,
    prefill_ms_per_token: 0.08,
    prefill_ms_per_token_sq: 2e-5,
    decode_base_ms: 12,
    decode_ms_per_seq: 0.6,
    decode_ms_per_context_token: 0.0004,
    prefill_blocks_decode: 0,
    kv_cache_tokens: 8 * 8192,
  }),
}

export const CPU_LIKE_TRUTH: Truth = {
  name: 'CPU-like (a prefill stalls decoding, as llama.cpp on the kit)',
  engine: 'llama.cpp',
  contextPerSlot: 4096,
  params: resolveSimParams({
    slots: 4,
    prefill_base_ms: 10,
    prefill_ms_per_token: 0.5,
    prefill_ms_per_token_sq: 3e-4,
    decode_base_ms: 10,
    decode_ms_per_seq: 4,
    decode_ms_per_context_token: 0.002,
    prefill_blocks_decode: 1,
    kv_cache_tokens: 4 * 4096,
  }),
}

export const TRUTHS: readonly Truth[] = [GPU_LIKE_TRUTH, CPU_LIKE_TRUTH]
