import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { RequestRecord } from '../records/types.js'
import { SERVER_METRICS_FILE } from '../result/folder-layout.js'
import { levelWindow } from '../server-metrics/level-figures.js'
import { readServerScrapes, type ServerScrape } from '../server-metrics/scrape-file.js'

/** The engine's running and waiting requests over the run, with where each measured level began. */
export interface ServerTimeline {
  samples: { seconds: number; series: 'running' | 'waiting'; value: number }[]
  levels: { seconds: number; label: string }[]
}

/**
 * The timeline of a run from its scrapes and records (a pure function): the running and waiting
 * gauges of every answered scrape of the first URL that reported them (several URLs are several
 * servers; their sum at one moment would mix times), and where each level's measured window began.
 * Seconds from that URL's first scrape. Null when no scrape reported either gauge.
 */
export function serverTimeline(
  scrapes: readonly ServerScrape[],
  records: readonly RequestRecord[],
  levels: readonly { value: number; name: string }[],
): ServerTimeline | null {
  const answered = scrapes.filter((scrape) => scrape.kind === 'scrape')
  const url = answered.find(
    (scrape) => scrape.values.gauges.running != null || scrape.values.gauges.waiting != null,
  )?.url
  if (url === undefined) return null
  const drawn = answered.filter((scrape) => scrape.url === url)
  const origin = Math.min(...drawn.map((scrape) => scrape.at))
  const seconds = (at: number): number => Math.round((at - origin) / 10) / 100
  const samples: ServerTimeline['samples'] = []
  for (const scrape of drawn)
    for (const series of ['running', 'waiting'] as const) {
      const value = scrape.values.gauges[series]
      if (value != null) samples.push({ seconds: seconds(scrape.at), series, value })
    }
  const starts = levels.flatMap(({ value, name }) => {
    const window = levelWindow(records, value)
    return window === null ? [] : [{ seconds: seconds(window.start), label: name }]
  })
  return { samples, levels: starts }
}

/** The timeline of a result folder from its scrapes and this run's records; null without either. */
export function readServerTimeline(
  dir: string,
  records: readonly RequestRecord[] | null,
  levels: readonly { value: number; name: string }[],
  runId?: string,
): ServerTimeline | null {
  const scrapesPath = join(dir, SERVER_METRICS_FILE)
  if (records === null || !existsSync(scrapesPath)) return null
  return serverTimeline(readServerScrapes(scrapesPath, runId), records, levels)
}
