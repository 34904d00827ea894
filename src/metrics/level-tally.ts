import type { RequestRecord } from '../records/types.js'
import { isOk } from './derive.js'
import { type ShardWindow, shardWindowAdd } from './shard-windows.js'
import { TokenTimeline } from './token-timeline.js'

/**
 * What almost every figure of a level reads: its requests, how many succeeded and their output
 * tokens, its window (first send to last end), each shard's own window, and where the token events
 * arrived. Fed first, before the
 * level's figures, so each figure's result can read it.
 */
export class LevelTally {
  requests = 0
  ok = 0
  outputTokens = 0
  windowStart = Number.POSITIVE_INFINITY
  windowEnd = Number.NEGATIVE_INFINITY
  /** Records of merged sharded runs carry their shard: each shard's window, for its own rate. */
  readonly shards = new Map<number, ShardWindow>()
  sharded = false
  /** Where the successful requests' token events arrived: ITL, ITL per token and the steady window read it. */
  readonly timeline = new TokenTimeline()

  add(record: RequestRecord): void {
    this.requests++
    if (record.sent_at < this.windowStart) this.windowStart = record.sent_at
    if (record.end_at > this.windowEnd) this.windowEnd = record.end_at
    if (record.shard !== undefined) this.sharded = true
    shardWindowAdd(this.shards, record)
    this.timeline.add(record)
    if (!isOk(record)) return
    this.ok++
    this.outputTokens += record.output_tokens
  }

  /** The measured window, seconds: 0 without records. */
  get durationS(): number {
    return this.requests === 0 ? 0 : (this.windowEnd - this.windowStart) / 1000
  }

  /**
   * Throughput over the level's window. Records of a merged sharded run carry their shard, and each
   * shard's throughput is taken over its own window (first send to last end) and summed: shards
   * started a little apart must not dilute each other's rate over the union of their windows.
   */
  rates(): { tokensPerS: number; requestsPerS: number } {
    const durationS = this.durationS
    if (!this.sharded)
      return durationS > 0
        ? { tokensPerS: this.outputTokens / durationS, requestsPerS: this.ok / durationS }
        : { tokensPerS: 0, requestsPerS: 0 }
    let tokensPerS = 0
    let requestsPerS = 0
    for (const shard of this.shards.values()) {
      const seconds = (shard.end - shard.start) / 1000
      if (seconds <= 0) continue
      tokensPerS += shard.tokens / seconds
      requestsPerS += shard.ok / seconds
    }
    return { tokensPerS, requestsPerS }
  }
}
