import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk, ttftMs } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { cachedPromptTokens, promptTokens } from './in-band-figures.js'

/**
 * TTFT against the share of the prompt the server served from its prefix cache: a level's successful
 * requests in quarter buckets of cached share, each with its TTFT p50 and the prompt tokens the server
 * still had to compute. With a shared prefix or sessions, this is the prefix cache's effect on latency.
 */
export interface CacheShareBucket {
  /** Cached share from (inclusive) ... */
  from: number
  /** ... to (exclusive; the last bucket includes 1). */
  to: number
  requests: number
  ttft_p50_ms: number | null
  /** Mean prompt tokens not taken from the cache: what the prefill computed. */
  uncached_tokens_mean: number
}

const EDGES = [0, 0.25, 0.5, 0.75, 1] as const

/** Null unless some request had cached tokens: without a hit there is no effect to show. */
export function cacheEffect(records: readonly RequestRecord[]): CacheShareBucket[] | null {
  return accumulate(records, cacheEffectAccumulator())
}

/** The same, fed record by record. */
export function cacheEffectAccumulator(): Accumulator<CacheShareBucket[] | null> {
  const buckets = EDGES.slice(0, -1).map(() => ({ ttfts: new Samples(), requests: 0, uncached: 0 }))
  let anyHit = false
  return {
    add(record) {
      if (!isOk(record)) return
      const cached = cachedPromptTokens(record)
      const prompt = promptTokens(record)
      const ttft = ttftMs(record)
      if (cached === null || prompt === null || prompt <= 0 || ttft === null) return
      if (cached > 0) anyHit = true
      const share = Math.min(1, cached / prompt)
      const index = Math.min(buckets.length - 1, Math.floor(share * buckets.length))
      const bucket = buckets[index] as (typeof buckets)[number]
      bucket.ttfts.push(ttft)
      bucket.requests++
      bucket.uncached += prompt - cached
    },
    result() {
      if (!anyHit) return null
      return buckets.map((bucket, i) => {
        const p50 = percentileOfSorted(bucket.ttfts.sorted(), 50)
        return {
          from: EDGES[i] as number,
          to: EDGES[i + 1] as number,
          requests: bucket.requests,
          ttft_p50_ms: p50 === null ? null : round(p50),
          uncached_tokens_mean: bucket.requests === 0 ? 0 : round(bucket.uncached / bucket.requests, 1),
        }
      })
    },
  }
}
