import type { RequestRecord } from '../records/types.js'
import { isOk, ttftMs } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { cachedPromptTokens, promptTokens } from './in-band-figures.js'

/**
 * A session run's figures by turn index (turn 0 = each session's first request): how long the
 * prompt grew, how much of it the server took from its prefix cache, and what that did to TTFT, so
 * the cache's effect over a conversation reads down one column. Over successful measured requests.
 */
export interface TurnFigures {
  turn: number
  requests: number
  ttft_ms_p50: number | null
  ttft_ms_p95: number | null
  /** Mean prompt tokens as the server counted them (usage.prompt_tokens, or llama.cpp's prompt_n + cache_n). */
  input_tokens_mean: number | null
  /** Mean cached prompt tokens, over the requests that reported a cache figure. */
  cached_tokens_mean: number | null
  /** Cached prompt tokens / prompt tokens, over the same requests; null = none reported. */
  cached_share: number | null
}

/** Null when no record is a session turn (a run of single prompts). */
export function turnFigures(records: readonly RequestRecord[]): TurnFigures[] | null {
  const byTurn = new Map<number, RequestRecord[]>()
  for (const record of records) {
    if (record.turn === undefined || !isOk(record)) continue
    const list = byTurn.get(record.turn)
    if (list === undefined) byTurn.set(record.turn, [record])
    else list.push(record)
  }
  if (byTurn.size === 0) return null
  return [...byTurn.keys()].sort((a, b) => a - b).map((turn) => figuresOf(turn, byTurn.get(turn) ?? []))
}

function figuresOf(turn: number, records: readonly RequestRecord[]): TurnFigures {
  const ttfts: number[] = []
  let inputSum = 0
  let inputCount = 0
  let cachedSum = 0
  let promptOfCached = 0
  let cachedCount = 0
  for (const record of records) {
    const ttft = ttftMs(record)
    if (ttft !== null) ttfts.push(ttft)
    const prompt = promptTokens(record)
    if (prompt !== null) {
      inputSum += prompt
      inputCount++
    }
    const cached = cachedPromptTokens(record)
    if (cached !== null && prompt !== null && prompt > 0) {
      cachedSum += cached
      promptOfCached += prompt
      cachedCount++
    }
  }
  const sorted = Float64Array.from(ttfts).sort()
  const at = (p: number): number | null => {
    const value = percentileOfSorted(Array.from(sorted), p)
    return value === null ? null : round(value)
  }
  return {
    turn,
    requests: records.length,
    ttft_ms_p50: at(50),
    ttft_ms_p95: at(95),
    input_tokens_mean: inputCount === 0 ? null : round(inputSum / inputCount, 1),
    cached_tokens_mean: cachedCount === 0 ? null : round(cachedSum / cachedCount, 1),
    cached_share: cachedCount === 0 ? null : round(cachedSum / promptOfCached, 4),
  }
}
