import type { LevelWindow } from './level-figures.js'
import type { ScrapeOk, ServerScrape } from './scrape-file.js'

/**
 * Whether the server freed the slots of the requests the client cancelled (--cancel-share), read
 * from its own running count. In concurrency mode the client holds the level's streams and no more:
 * a cancelled request's stream sends its next request at once. A server that frees a cancelled
 * request's slot holds (running + waiting) at most that many; one that decodes on for no one holds
 * more, by the cancelled requests it still works on. So the excess of the server's count over the
 * streams, scrape by scrape, is the evidence, its median the verdict: a scrape that lands in the
 * moment between a close and the server noticing it moves no median.
 */

/** The server's running count against the streams the client held. */
export interface SlotCheck {
  /** freed: the server held no more requests than the client had open; not_freed: it held more; cannot_tell: see reason. */
  verdict: 'freed' | 'not_freed' | 'cannot_tell'
  /** In words, with the figures it rests on. */
  reason: string
  /** Scrapes of the level's measured window the verdict is read from. */
  scrapes: number
  /** Requests the server held (running + waiting) minus the streams the client held, median over the scrapes; null = no running count. */
  excess_median: number | null
  excess_max: number | null
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
): SlotCheck {
  const answered = scrapes.filter((s): s is ScrapeOk => s.kind === 'scrape')
  const cannot = (reason: string, count = 0): SlotCheck => ({
    verdict: 'cannot_tell',
    reason,
    scrapes: count,
    excess_median: null,
    excess_max: null,
  })
  const counted = answered.filter((s) => s.values.gauges.running !== undefined)
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
      reason: `${held}: cancelled requests still hold slots, the server works on for clients that closed`,
      ...figures,
    }
  if (median <= 0)
    return { verdict: 'freed', reason: `${held}: the running count fell with the cancellations`, ...figures }
  return { verdict: 'cannot_tell', reason: `${held}: between freed and not`, ...figures }
}
