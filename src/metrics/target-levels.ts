import type { RequestRecord } from '../records/types.js'
import { splitProportionally } from '../schedule/split.js'
import { withServerFigures } from '../server-metrics/level-figures.js'
import type { ServerScrape } from '../server-metrics/scrape-file.js'
import type { LevelClientStats } from './client-health.js'
import { poolRepeats } from './repeat-pool.js'
import { LevelSummarizer, type LevelSummary, type SummaryOptions } from './summarize.js'

/**
 * Several endpoints or models in one run: each target's own figures per level, from its records
 * alone, by the same summarizer as the whole level's (./summarize.ts).
 *
 * A target is an (endpoint, model) pair, numbered endpoint × models + model (schedule/target-split.ts).
 * Its level is its own share of the run's level: the streams the split gave it (concurrency mode,
 * schedule/target-share.ts) or its share of the rate, so its knee is placed on its own load.
 */

export interface RunSplitMeta {
  /** The endpoints in the order given (base_url first), as shown: no credentials. */
  endpoints: {
    url: string
    weight: number
    /** The slots its server declared before the run (llama.cpp total_slots, ...); null = unknown. Absent in a split not read. */
    slots?: number | null
  }[]
  /** The models in the order given (model first). */
  models: { id: string; weight: number }[]
  /**
   * --paired: the two targets took turns, each given the whole level in its blocks
   * (run/plan/paired-blocks.ts), so each target's load is the level itself. Absent otherwise.
   */
  paired?: true
  /**
   * --paired-mode together: both targets were given the whole level at the same time, block by
   * block, rather than in turns. Absent = interleave (and in results written before the mode).
   */
  paired_mode?: 'together'
}

export type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/** One target's figures at one of the run's levels. */
export interface TargetLevel {
  /** The run's level. */
  level: number
  figures: LevelFigures
}

/** The targets' weights, in target order: an endpoint's weight times its model's. */
export function targetWeights(split: RunSplitMeta): number[] {
  return split.endpoints.flatMap((e) => split.models.map((m) => e.weight * m.weight))
}

/** Target t's share of a level: its streams (closed loop, as the split dealt them) or its share of the rate. */
export function targetLoad(split: RunSplitMeta, level: number, target: number, rateMode: boolean): number {
  if (split.paired === true) return level
  const weights = targetWeights(split)
  if (rateMode) {
    const total = weights.reduce((a, b) => a + b, 0)
    return (level * (weights[target] as number)) / total
  }
  return splitProportionally(level, weights)[target] as number
}

export function targetIndexOf(split: RunSplitMeta, record: RequestRecord): number {
  const { target } = record
  return target === undefined ? 0 : target.endpoint * split.models.length + target.model
}

/** Fed the measured records of a run (any order), gives each target's figures for a level. */
export class TargetLevels {
  private readonly summarizers = new Map<string, LevelSummarizer>()
  private readonly rateMode: boolean

  constructor(
    private readonly split: RunSplitMeta,
    private readonly options: SummaryOptions,
  ) {
    this.rateMode = options.mode === 'request_rate'
  }

  add(record: RequestRecord): void {
    if (record.phase !== 'measure') return
    const target = targetIndexOf(this.split, record)
    const load = targetLoad(this.split, record.level, target, this.rateMode)
    this.summarizerOf(`${target}@${record.level}`, load).add(record)
    // --paired: each block on its own too; a target's level spans the other's blocks between its own.
    if (record.pair !== undefined)
      this.summarizerOf(`${target}@${record.level}#${record.pair}`, load).add(record)
  }

  private summarizerOf(key: string, load: number): LevelSummarizer {
    let summarizer = this.summarizers.get(key)
    if (summarizer === undefined) {
      summarizer = new LevelSummarizer(load, this.options)
      this.summarizers.set(key, summarizer)
    }
    return summarizer
  }

  /**
   * Each target's figures at `level` (null for a target that sent nothing there), in target order.
   * With one model, a target is an endpoint, and its server figures are its own server's: the scrapes
   * of its origin's URLs only, over its own window. With several models on an endpoint, its server's
   * gauges count every model's requests, so a target gets none.
   */
  level(
    level: number,
    client: LevelClientStats,
    scrapes: readonly ServerScrape[] = [],
    percentiles: readonly number[] = [],
  ): (LevelFigures | null)[] {
    return targetWeights(this.split).map((_, target) => {
      const summarizer = this.summarizers.get(`${target}@${level}`)
      const window = summarizer?.window() ?? null
      if (summarizer === undefined || window === null) return null
      const figures = summarizer.result(client)
      if (this.split.paired === true) return this.pairedFigures(target, level, figures, client)
      if (this.split.models.length > 1) return figures
      const origin = new URL(this.split.endpoints[target]?.url ?? 'http://unknown').origin
      const own = scrapes.filter(
        (scrape) => URL.canParse(scrape.url) && new URL(scrape.url).origin === origin,
      )
      return withServerFigures(figures, window, own, percentiles)
    })
  }

  /**
   * --paired: a target's level is its blocks, with the other target's blocks between them: its
   * rates and concurrency are its blocks' means, as --repeat pools its runs (repeat-pool.ts), and it
   * gets no server figures (its server sat idle through the other's blocks, inside its window).
   */
  private pairedFigures(
    target: number,
    level: number,
    pooled: LevelFigures,
    client: LevelClientStats,
  ): LevelFigures {
    const blocks: LevelFigures[] = []
    for (let pair = 0; ; pair++) {
      const block = this.summarizers.get(`${target}@${level}#${pair}`)
      if (block === undefined) break
      if (block.window() !== null) blocks.push(block.result(client))
    }
    return poolRepeats(blocks, pooled)
  }
}
