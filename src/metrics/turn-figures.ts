import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk, ttftMs } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { cachedPromptTokens, promptTokens } from './in-band-figures.js'
import { ToolTurnCount } from './tool-turn-count.js'

/**
 * A session run's figures by turn index (turn 0 = each session's first request): how long the
 * prompt grew, how much of it the server took from its prefix cache, and what that did to TTFT, so
 * the cache's effect over a conversation reads down one column. Over successful measured requests.
 */
export interface TurnFigures {
  turn: number
  requests: number
  ttft_p50_ms: number | null
  ttft_p95_ms: number | null
  /** Mean prompt tokens as the server counted them (usage.prompt_tokens, or llama.cpp's prompt_n + cache_n). */
  input_tokens_mean: number | null
  /** Mean cached prompt tokens, over the requests that reported a cache figure. */
  cached_tokens_mean: number | null
  /** Cached prompt tokens / prompt tokens, over the same requests; null = none reported. */
  cached_share: number | null
  /**
   * --tools: of `requests`, those whose reply called tools (their calls and the tools' results went
   * into the next turn's history: workload/tool-turn.ts). Absent in runs without tools.
   */
  tool_call_turns?: number
}

/** Null when no record is a session turn (a run of single prompts). */
export function turnFigures(records: readonly RequestRecord[]): TurnFigures[] | null {
  return accumulate(records, turnAccumulator())
}

/** One turn index's tally over its successful requests. */
class TurnTally {
  requests = 0
  readonly ttfts = new Samples()
  inputSum = 0
  inputCount = 0
  cachedSum = 0
  promptOfCached = 0
  cachedCount = 0
  readonly toolTurns = new ToolTurnCount()

  add(record: RequestRecord): void {
    this.requests++
    this.toolTurns.add(record)
    this.ttfts.pushFigure(ttftMs(record))
    const prompt = promptTokens(record)
    if (prompt !== null) {
      this.inputSum += prompt
      this.inputCount++
    }
    const cached = cachedPromptTokens(record)
    if (cached !== null && prompt !== null && prompt > 0) {
      this.cachedSum += cached
      this.promptOfCached += prompt
      this.cachedCount++
    }
  }

  figures(turn: number): TurnFigures {
    const sorted = this.ttfts.sorted()
    const at = (p: number): number | null => {
      const value = percentileOfSorted(sorted, p)
      return value === null ? null : round(value)
    }
    return {
      turn,
      requests: this.requests,
      ttft_p50_ms: at(50),
      ttft_p95_ms: at(95),
      input_tokens_mean: this.inputCount === 0 ? null : round(this.inputSum / this.inputCount, 1),
      cached_tokens_mean: this.cachedCount === 0 ? null : round(this.cachedSum / this.cachedCount, 1),
      cached_share: this.cachedCount === 0 ? null : round(this.cachedSum / this.promptOfCached, 4),
      ...this.toolTurns.figure(),
    }
  }
}

/** The same, fed record by record. */
export function turnAccumulator(): Accumulator<TurnFigures[] | null> {
  const byTurn = new Map<number, TurnTally>()
  return {
    add(record) {
      if (record.turn === undefined || !isOk(record)) return
      let tally = byTurn.get(record.turn)
      if (tally === undefined) {
        tally = new TurnTally()
        byTurn.set(record.turn, tally)
      }
      tally.add(record)
    },
    result() {
      if (byTurn.size === 0) return null
      return [...byTurn.keys()]
        .sort((a, b) => a - b)
        .map((turn) => (byTurn.get(turn) as TurnTally).figures(turn))
    },
  }
}
