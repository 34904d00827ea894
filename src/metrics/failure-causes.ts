import { failureCause, isNonLoadFailure, UNREACHABLE_HOST } from '../records/failure-cause.js'
import type { RequestRecord } from '../records/types.js'

/** One failure message of a level and how many of its requests ended with it. */
export interface ErrorMessageCount {
  /** The first of them, verbatim. */
  message: string
  count: number
  /** True when the messages counted differ in their numbers (token counts, ids), as vLLM's do. */
  numbers_vary: boolean
}

/** Requests of a level that failed (or came back empty) for a reason that is not load. */
export interface NonLoadCause {
  /** Requests that show it: non-load failures, or the successful requests that carried no token. */
  requests: number
  /** What went wrong, in a few words; the server's own words are in error_messages. */
  cause: string
  /** The most frequent message among them (the server's own words for HTTP errors). */
  message: string
  /** What to change. */
  hint: string
}

/** A level that measured nothing about capacity: non-load failures on half its requests or more, or no output. */
export type Misconfiguration = NonLoadCause

export interface LevelFailures {
  /** The most frequent failure messages, most frequent first (the server's own words for HTTP errors). */
  error_messages: ErrorMessageCount[]
  /**
   * Every failure of the level that is not load, with the most frequent one's cause; null when
   * none. They do not count against the level's health (a few over-long prompts of a dataset do
   * not make a server overloaded) and are said beside its verdict.
   */
  non_load_failures: NonLoadCause | null
  misconfiguration: Misconfiguration | null
}

interface MessageGroup {
  /** The first message of the group, verbatim. */
  message: string
  count: number
  /** HTTP 5xx answers: load by default, unless every request of the level got the same one (sameRefusal). */
  serverError: boolean
  numbersVary: boolean
  nonLoad: boolean
  /** The first non-load failure's cause, worked out when the group starts (the record is not kept). */
  cause: ReturnType<typeof failureCause> | null
}

/** How many distinct failure messages a level keeps, with their counts. */
export const TOP_ERROR_MESSAGES = 3

/**
 * Why a level's requests failed, from its measured records: the top messages with counts, and
 * which failures are the set-up's fault rather than load. A level is misconfigured when failures
 * that are not load (see isNonLoadFailure) are at least half of its requests, or when requests
 * succeeded but not one output token came back: either way the level measured nothing about
 * capacity. Fewer non-load failures are reported, not a verdict.
 */
export function levelFailures(
  records: readonly RequestRecord[],
  ok: number,
  outputTokens: number,
  /** False for embeddings: succeeding with no output token is then what they do, not a fault. */
  generates = true,
): LevelFailures {
  const groups = new FailureGroups()
  for (const record of records) groups.add(record)
  return groups.judge(records.length, ok, outputTokens, generates)
}

/** A level's failures grouped by message shape as they arrive; judged once the level's counts are known. */
export class FailureGroups {
  private readonly groups = new Map<string, MessageGroup>()
  private nonLoad = 0

  /** `format`: what the protocol in use answers with, in words (for the hint of an unreadable answer). */
  constructor(private readonly format?: string) {}

  add(record: RequestRecord): void {
    if (record.error === null) return
    const isNonLoad = isNonLoadFailure(record)
    if (isNonLoad) this.nonLoad++
    const message = record.error.message
    // Servers put the request's own figures in the sentence ("you requested 4200 tokens"): one group.
    const shape = message.replace(/\d+/g, '#')
    const group = this.groups.get(shape)
    if (group === undefined)
      this.groups.set(shape, {
        message,
        count: 1,
        serverError: record.error.class === 'http_5xx',
        numbersVary: false,
        nonLoad: isNonLoad,
        cause: isNonLoad
          ? failureCause(record, {
              recordsIn: 'requests.jsonl',
              ...(this.format === undefined ? {} : { format: this.format }),
            })
          : null,
      })
    else {
      group.count++
      if (group.message !== message) group.numbersVary = true
    }
  }

  /** `generates` false for embeddings: succeeding with no output token is then what they do, not a fault. */
  judge(requests: number, ok: number, outputTokens: number, generates: boolean): LevelFailures {
    const nonLoad = this.nonLoad
    // Map order is first appearance, and sort is stable: ties keep it.
    const ranked = [...this.groups.values()].sort((a, b) => b.count - a.count)
    const error_messages = ranked
      .slice(0, TOP_ERROR_MESSAGES)
      .map((group) => ({ message: group.message, count: group.count, numbers_vary: group.numbersVary }))
    const top = ranked.find((group) => group.nonLoad)
    const found = top?.cause ?? null
    const non_load_failures =
      top === undefined || found === null ? null : { requests: nonLoad, message: top.message, ...found }
    if (non_load_failures !== null && 2 * nonLoad >= requests)
      return { error_messages, non_load_failures, misconfiguration: non_load_failures }
    const refusal = sameRefusal(ranked, requests, ok)
    if (refusal !== null) return { error_messages, non_load_failures: refusal, misconfiguration: refusal }
    if (generates && ok > 0 && outputTokens === 0) {
      return {
        error_messages,
        non_load_failures,
        misconfiguration: {
          requests: ok,
          cause: 'no output tokens',
          message: `${ok} request(s) succeeded but the server sent no output token: the level measured no generation`,
          hint: 'check --endpoint (chat vs completions) and the model, and look at the responses in requests.jsonl: the stream carries no content',
        },
      }
    }
    return { error_messages, non_load_failures, misconfiguration: null }
  }
}

/** Words a server under load answers with: such a 5xx is load, however often it repeats. */
const OVERLOAD_WORDS =
  /overload|capacity|busy|unavailable|rate.?limit|too many|queue|timed? ?out|try again|out of memory|\boom\b|bad gateway|gateway time/i

/** Fewer requests than this, and one message repeated proves nothing. */
const MIN_SAME_REFUSALS = 3

/**
 * A 5xx is load by default, but not when the server gave every request of the level the same words,
 * none of them a server's words for overload, and answered none: llama.cpp's "HTTP 500: Cannot use
 * tools with stream" to every --tools request was judged "overloaded" and "client-bound" (issue 36).
 * A server that refuses the request itself says so at any load.
 */
/** The cause of a level whose every request got the same non-overload 5xx: counted as load request by request. */
export const SAME_REFUSAL = 'the server refused every request the same way, not for load'

function sameRefusal(
  ranked: readonly MessageGroup[],
  requests: number,
  ok: number,
): LevelFailures['misconfiguration'] {
  const [top] = ranked
  if (top === undefined || ranked.length !== 1 || ok > 0 || requests < MIN_SAME_REFUSALS) return null
  if (!top.serverError || top.numbersVary || top.count !== requests || OVERLOAD_WORDS.test(top.message))
    return null
  return {
    requests: top.count,
    message: top.message,
    cause: SAME_REFUSAL,
    hint: 'the server rejects something in the request itself (a feature such as --tools or --images, the model, a parameter): read its message, fix the set-up and re-run',
  }
}

type Judged = { value: number; ok: number } & Partial<LevelFailures>

/**
 * A refused connection is the set-up's fault (wrong port, server not started) only until the
 * server has answered: once a request at this level or a lower one succeeded, the server was
 * there, so connections refused afterwards mean it went away under load (crashed, OOM-killed).
 * Such a level's unreachable failures are load, like a 5xx: it is overloaded, not misconfigured,
 * and does not fail the run by itself. Only levels whose most frequent non-load failure is the
 * unreachable host change; levels are judged from their summaries, in level order.
 */
export function unreachableAfterAnswers<Level extends Judged>(levels: readonly Level[]): Level[] {
  const answeredAt = Math.min(...levels.filter((level) => level.ok > 0).map((level) => level.value))
  return levels.map((level) => {
    if (level.value < answeredAt || level.non_load_failures?.cause !== UNREACHABLE_HOST) return level
    const misconfiguration =
      level.misconfiguration?.cause === UNREACHABLE_HOST ? null : (level.misconfiguration ?? null)
    return { ...level, non_load_failures: null, misconfiguration }
  })
}
