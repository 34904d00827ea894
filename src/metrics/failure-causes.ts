import { failureCause, isNonLoadFailure } from '../records/failure-cause.js'
import type { RequestRecord } from '../records/types.js'

/** One failure message of a level and how many of its requests ended with it. */
export interface ErrorMessageCount {
  /** The first of them, verbatim. */
  message: string
  count: number
  /** True when the messages counted differ in their numbers (token counts, ids), as vLLM's do. */
  numbers_vary: boolean
}

/** A level whose requests failed (or came back empty) for a reason that is not load. */
export interface Misconfiguration {
  /** Requests that show it: non-load failures, or the successful requests that carried no token. */
  requests: number
  /** What went wrong, in a few words; the server's own words are in error_messages. */
  cause: string
  /** The most frequent message among them (the server's own words for HTTP errors). */
  message: string
  /** What to change. */
  hint: string
}

export interface LevelFailures {
  /** The most frequent failure messages, most frequent first (the server's own words for HTTP errors). */
  error_messages: ErrorMessageCount[]
  misconfiguration: Misconfiguration | null
}

interface MessageGroup {
  /** The first message of the group, verbatim. */
  message: string
  count: number
  numbersVary: boolean
  nonLoad: boolean
  first: RequestRecord
}

/** How many distinct failure messages a level keeps, with their counts. */
export const TOP_ERROR_MESSAGES = 3

/**
 * Why a level's requests failed, from its measured records: the top messages with counts, and
 * whether the failures are the set-up's fault rather than load. A level is misconfigured when at
 * least half of its failures are not load (see isNonLoadFailure), or when requests succeeded but
 * not one output token came back: either way the level measured nothing about capacity.
 */
export function levelFailures(
  records: readonly RequestRecord[],
  ok: number,
  outputTokens: number,
): LevelFailures {
  const groups = new Map<string, MessageGroup>()
  let failed = 0
  let nonLoad = 0
  for (const record of records) {
    if (record.error === null) continue
    failed++
    const isNonLoad = isNonLoadFailure(record)
    if (isNonLoad) nonLoad++
    const message = record.error.message
    // Servers put the request's own figures in the sentence ("you requested 4200 tokens"): one group.
    const shape = message.replace(/\d+/g, '#')
    const group = groups.get(shape)
    if (group === undefined)
      groups.set(shape, { message, count: 1, numbersVary: false, nonLoad: isNonLoad, first: record })
    else {
      group.count++
      if (group.message !== message) group.numbersVary = true
    }
  }
  // Map order is first appearance, and sort is stable: ties keep it.
  const ranked = [...groups.values()].sort((a, b) => b.count - a.count)
  const error_messages = ranked
    .slice(0, TOP_ERROR_MESSAGES)
    .map((group) => ({ message: group.message, count: group.count, numbers_vary: group.numbersVary }))
  const top = ranked.find((group) => group.nonLoad)
  if (top !== undefined && 2 * nonLoad >= failed) {
    const found = failureCause(top.first)
    if (found !== null)
      return { error_messages, misconfiguration: { requests: nonLoad, message: top.message, ...found } }
  }
  if (ok > 0 && outputTokens === 0) {
    return {
      error_messages,
      misconfiguration: {
        requests: ok,
        cause: 'no output tokens',
        message: `${ok} request(s) succeeded but the server sent no output token: the level measured no generation`,
        hint: 'check --endpoint (chat vs completions) and the model, and look at the responses in requests.jsonl: the stream carries no content',
      },
    }
  }
  return { error_messages, misconfiguration: null }
}
