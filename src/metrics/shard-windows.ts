import type { RequestRecord } from '../records/types.js'
import { isOk } from './derive.js'

/** One shard's part of a level: its window (first send to last end, ms) and what it delivered. */
export interface ShardWindow {
  start: number
  end: number
  /** Output tokens and count of its successful requests. */
  tokens: number
  ok: number
}

/**
 * The records of a level grouped by the shard that sent them (records without one count as shard 0):
 * each shard's own window, used for its throughput and for how well the shards overlapped.
 */
export function shardWindows(records: Iterable<RequestRecord>): Map<number, ShardWindow> {
  const shards = new Map<number, ShardWindow>()
  for (const r of records) shardWindowAdd(shards, r)
  return shards
}

/** One record into its shard's window. */
export function shardWindowAdd(shards: Map<number, ShardWindow>, r: RequestRecord): void {
  const key = r.shard ?? 0
  let shard = shards.get(key)
  if (shard === undefined) {
    shard = { start: Number.POSITIVE_INFINITY, end: Number.NEGATIVE_INFINITY, tokens: 0, ok: 0 }
    shards.set(key, shard)
  }
  shard.start = Math.min(shard.start, r.sent_at)
  shard.end = Math.max(shard.end, r.end_at)
  if (isOk(r)) {
    shard.tokens += r.output_tokens
    shard.ok++
  }
}
