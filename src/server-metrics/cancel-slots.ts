import type { LevelWindow } from './level-figures.js'
import type { ScrapeOk, ServerScrape } from './scrape-file.js'

/**
 * Whether the server freed the slots of the requests the client cancelled (--cancel-share), from
 * two readings of its /metrics, either of which may be missing:
 *
 * - Its running count (+ waiting). In concurrency mode the client holds the level's streams and no
 *   more: a cancelled request's stream sends its next request at once. A server that frees a
 *   cancelled request's slot holds at most that many; one that decodes on for no one holds more, by
 *   the cancelled requests it still works on. The excess over the streams, scrape by scrape, is the
 *   evidence, its median the reading: a scrape that lands between a close and the server noticing
 *   it moves no median. A server whose slots are all taken cannot show more running than its slots,
 *   and llama.cpp queues outside its count: there the count can clear a server, not convict it.
 * - Its generated-tokens counter over the level against the tokens the client received. A server
 *   that decodes on generates the tokens the cancels spared (forgone_tokens) for no one; one that
 *   stops generates about what was received. Read as the share of the spared tokens generated
 *   unread; it holds whatever the slots and in both load modes.
 *
 * Either reading of not_freed makes the verdict not_freed; else either of freed makes it freed.
 */

/** The server's running count and generated tokens against what the client held and received. */
export interface SlotCheck {
  /** freed: the server let go of the cancelled requests; not_freed: it worked on for no one; cannot_tell: see reason. */
  verdict: 'freed' | 'not_freed' | 'cannot_tell'
  /** In words, with the figures it rests on. */
  reason: string
  /** Scrapes of the running count the first reading is read from (0 when it was not read). */
  scrapes: number
  /** Requests the server held (running + waiting) minus the streams the client held, median over the scrapes; null = not read. */
  excess_median: number | null
  excess_max: number | null
  /** The server's generated tokens over the level less the tokens the client received; null = no counter. */
  unread_tokens?: number | null
}

/** What the client received over the level, and what its cancels spared. */
export interface ClientTokens {
  /** The server's generated-tokens counter over the level's window (ServerLevelFigures.generation_tokens). */
  generated: number | null
  /** Output tokens of the level's requests (completed) plus the cancelled ones' received. */
  received: number
  /** CancellationFigures.forgone_tokens. */
  forgone: number | null
}

/** Fewer scrapes than this in the window: too few to read a median from. */
export const MIN_SLOT_SCRAPES = 3

export interface SlotLevel {
  value: number
  mode?: 'concurrency' | 'request_rate'
}

/** The check over the level's steady part when enough scrapes fell in it, else over its measured `window`. */
export function slotCheck(
  scrapes: readonly ServerScrape[],
  level: SlotLevel,
  window: LevelWindow,
  steady: LevelWindow | null,
  tokens: ClientTokens,
): SlotCheck {
  const count = countReading(scrapes, level, window, steady)
  const generated = tokenReading(tokens)
  const readings = [count, generated]
  const said = (verdict: SlotCheck['verdict']) => readings.filter((r) => r.verdict === verdict)
  const verdict =
    said('not_freed').length > 0 ? 'not_freed' : said('freed').length > 0 ? 'freed' : 'cannot_tell'
  // The reading that decided first, the other after it.
  const ordered = [...said(verdict), ...readings.filter((r) => r.verdict !== verdict)]
  const reason = ordered.map((r) => r.reason).join('; ')
  return {
    verdict,
    reason,
    scrapes: count.scrapes,
    excess_median: count.excess_median,
    excess_max: count.excess_max,
    unread_tokens: generated.unread,
  }
}

interface Reading {
  verdict: SlotCheck['verdict']
  reason: string
}

/** The running count (+ waiting) against the streams, scrape by scrape. */
function countReading(
  scrapes: readonly ServerScrape[],
  level: SlotLevel,
  window: LevelWindow,
  steady: LevelWindow | null,
): Reading & Pick<SlotCheck, 'scrapes' | 'excess_median' | 'excess_max'> {
  const cannot = (reason: string, count = 0) => ({
    verdict: 'cannot_tell' as const,
    reason,
    scrapes: count,
    excess_median: null,
    excess_max: null,
  })
  const counted = scrapes.filter(
    (s): s is ScrapeOk => s.kind === 'scrape' && s.values.gauges.running !== undefined,
  )
  if (counted.length === 0)
    return cannot(
      'the server publishes no running-requests count (vLLM num_requests_running, llama.cpp requests_processing, ...)',
    )
  const urls = new Set(counted.map((s) => s.url))
  if (urls.size > 1)
    return cannot(
      `${urls.size} metrics URLs publish a running count: their sum cannot be matched to one scrape time`,
    )
  if (level.mode === 'request_rate')
    return cannot(
      'request-rate mode: the client holds no fixed number of streams to set the running count against',
    )
  const within = (w: LevelWindow) => counted.filter((s) => s.at >= w.start && s.at + s.duration_ms <= w.end)
  const steadyScrapes = steady === null ? [] : within(steady)
  const used = steadyScrapes.length >= MIN_SLOT_SCRAPES ? steadyScrapes : within(window)
  if (used.length < MIN_SLOT_SCRAPES)
    return cannot(
      `${used.length} scrape(s) of the running count inside the level, ${MIN_SLOT_SCRAPES} needed`,
      used.length,
    )
  const excess = used
    .map((s) => (s.values.gauges.running as number) + (s.values.gauges.waiting ?? 0) - level.value)
    .sort((a, b) => a - b)
  const median = excess[Math.floor((excess.length - 1) / 2)] as number
  const max = excess.at(-1) as number
  const figures = { scrapes: used.length, excess_median: median, excess_max: max }
  const held = `the server held ${level.value + median} request(s) running or waiting (median of ${used.length} scrapes, most ${level.value + max}) while the client kept ${level.value} stream(s) open`
  if (median >= 1)
    return {
      verdict: 'not_freed',
      reason: `${held}: cancelled requests still held slots`,
      ...figures,
    }
  if (median <= 0)
    return { verdict: 'freed', reason: `${held}: the running count fell with the cancellations`, ...figures }
  return { verdict: 'cannot_tell', reason: `${held}: between freed and not`, ...figures }
}

/** Share of the spared tokens generated unread at or above which the server decoded on for no one ... */
export const UNREAD_NOT_FREED_SHARE = 0.5
/** ... and at or below which it stopped (the counter's edges are estimated: a few percent either way). */
export const UNREAD_FREED_SHARE = 0.25
/** Spared tokens fewer than this share of those received are lost in the counter's edges: no reading. */
const MIN_FORGONE_SHARE = 0.05

/** The generated-tokens counter against the tokens received. */
function tokenReading(tokens: ClientTokens): Reading & { unread: number | null } {
  const { generated, received, forgone } = tokens
  if (generated === null)
    return {
      verdict: 'cannot_tell',
      reason:
        'the server publishes no generated-tokens counter (vLLM generation_tokens, llama.cpp tokens_predicted)',
      unread: null,
    }
  const unread = Math.round(generated - received)
  if (forgone === null || forgone <= 0 || forgone < MIN_FORGONE_SHARE * received)
    return {
      verdict: 'cannot_tell',
      reason: `the cancels spared too few tokens (${forgone ?? 'unknown'}) to show in the server's generated-tokens counter`,
      unread,
    }
  const share = unread / forgone
  const said = `the server generated ${Math.round(generated)} tokens over the level, the client received ${received} (${unread >= 0 ? '+' : ''}${unread}, ${Math.round(100 * share)}% of the ${forgone} the cancels spared)`
  if (share >= UNREAD_NOT_FREED_SHARE)
    return { verdict: 'not_freed', reason: `${said}: it decoded on for clients that had closed`, unread }
  if (share <= UNREAD_FREED_SHARE)
    return { verdict: 'freed', reason: `${said}: it stopped generating for them`, unread }
  return { verdict: 'cannot_tell', reason: `${said}: between freed and not`, unread }
}
