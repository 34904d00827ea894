import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BlockStamp, type CostChange, hostCosts, Target } from '../../bench/gate/virtual-target.js'
import {
  bracketed,
  bracketLadder,
  MAX_SEARCH_PROBES,
  nextProbe,
  type SearchPlan,
  searchOutcome,
} from '../../src/analysis/search.js'
import {
  decodeStepMs,
  type EngineObserver,
  prefillMs,
  resolveSimParams,
  type SimParams,
  VirtualClock,
} from '../../src/model/engine.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { buildResult } from '../../src/result/build-result.js'
import { RECORDS_FILE, RESULT_FILE, SERVER_METRICS_FILE } from '../../src/result/folder-layout.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { controlRequests } from '../../src/run/plan/level-plan.js'
import { splitProportionally } from '../../src/schedule/split.js'
import { staggeredStarts, staggerSpreadMs } from '../../src/schedule/stagger.js'
import { targetStreams } from '../../src/schedule/target-share.js'
import { parseExposition } from '../../src/server-metrics/prometheus-text.js'
import type { ScrapeOk } from '../../src/server-metrics/scrape-file.js'
import { mapScrape } from '../../src/server-metrics/vocabulary.js'
import type { SimSlowdown } from '../../src/sim/slowdown.js'
import { VllmMetrics } from '../../src/sim/vllm-metrics.js'

/**
 * A result folder as `run` writes it, made in virtual time: the simulator's engine on a
 * VirtualClock (bench/gate/virtual-target.ts) with 5% noise on every step from a fixed seed, a
 * closed-loop gradient of its levels (each run `repeat` times back to back, then the drift control),
 * summarized by the same buildResult as `run` and `report`. For tests whose subject is what is
 * judged of runs (compare, repeats), not how long a run takes: the same folders on any machine, in
 * milliseconds.
 *
 * The run's set-up (client, workload, estimate) is the one of test/fixtures/rendered/conc, a real
 * run of a 4-slot simulator over levels 1,2,4,8: its meta is the template, its lengths and levels
 * replaced by this run's. A level past the template's takes its last level's client figures (a
 * quiet client: never the bottleneck).
 *
 * With `scrapeEveryMs`, the server's /metrics is scraped as `run` does, in virtual time: the
 * simulator's own vLLM metrics (src/sim/vllm-metrics.ts) rendered, parsed and mapped by the
 * scraper's functions, once at each level's start and every `scrapeEveryMs` while the engine is busy.
 */
const TEMPLATE = fileURLToPath(new URL('../fixtures/rendered/conc/', import.meta.url))

export interface VirtualRun {
  sim: Partial<SimParams>
  /** The concurrency levels, in the order run; with `search`, the ones it chooses. */
  levels?: readonly number[]
  /** --search over this plan, the levels chosen as `run` chooses them (the answer measured again at the end). */
  search?: SearchPlan
  /** The run's SLOs (metrics.slo), e.g. { ttft_p95_ms: 120 }. */
  slo?: Record<string, number>
  /**
   * Prompt lengths probed once each before the levels, one output token (phase "calibration"), as
   * `--calibrate` probes them: the capacity model's prefill evidence.
   */
  calibrate?: readonly number[]
  /** The drift control at the end (the first level again); default true. */
  control?: boolean
  /**
   * The server slows down mid-run as the simulator's `slowdown` does: from its request
   * `after_requests` + 1 on (counted as they get a slot), every cost `factor` times.
   */
  slowdown?: SimSlowdown
  requests: number
  inputTokens: number
  outputTokens: number
  /** The seed of the steps' noise: an A/A pair is two seeds of one server. */
  seed: number
  /** Each engine step's coefficient of variation; default 5% (bench/gate/virtual-target.ts STEP_NOISE). */
  stepNoise?: number
  /** Each level run this many times back to back (`--repeat`); default 1. */
  repeat?: number
  /** Scrape the server's /metrics this often (ms of virtual time) into server-metrics.jsonl; none without. */
  scrapeEveryMs?: number
  /**
   * More endpoints beside `sim`'s, as `target.more_base_urls`: each its own server on the same clock,
   * given its share of every level's streams and requests as the run splits them (weights 1).
   */
  moreEndpoints?: readonly Partial<SimParams>[]
  /**
   * Each endpoint's streams start spread over three quarters of one request, as the client staggers
   * them (src/schedule/stagger.ts), not in one batch whose prefills add up; default all at once.
   */
  stagger?: boolean
}

/** Writes the run into `dir` (a new folder) and returns its result. */
export function writeVirtualRun(dir: string, run: VirtualRun): BenchResult {
  const template = JSON.parse(readFileSync(join(TEMPLATE, RESULT_FILE), 'utf8')) as BenchResult
  const runId = template.meta.run_id as string
  const clock = new VirtualClock()
  const servers = [run.sim, ...(run.moreEndpoints ?? [])]
  if (servers.length > 1 && run.scrapeEveryMs !== undefined)
    throw new Error('writeVirtualRun: scrapes are of one endpoint; give scrapeEveryMs or moreEndpoints')
  const params = resolveSimParams(run.sim)
  const metrics = run.scrapeEveryMs === undefined ? null : new VllmMetrics('sim', params.kv_cache_tokens)
  const lengths = { input: run.inputTokens, output: run.outputTokens }
  // The first server's costs, changed in place by a slowdown.
  const change = { decode: 1, prefill: 1 }
  const targets = servers.map(
    (sim, i) =>
      new Target(
        hostCosts(
          resolveSimParams(sim),
          i === 0 ? change : { decode: 1, prefill: 1 },
          () => 1,
          clock,
          seededRandom(run.seed + i),
          run.stepNoise,
        ),
        clock,
        lengths,
        i === 0 ? slowingDown(run.slowdown, change, metrics) : null,
      ),
  )
  const target = targets[0] as Target
  const staggered = (endpoint: number, streams: number): Float64Array | undefined => {
    if (run.stagger !== true) return undefined
    const server = resolveSimParams(servers[endpoint])
    const oneRequestMs =
      prefillMs(server, run.inputTokens) +
      (run.outputTokens - 1) * decodeStepMs(server, 1, run.inputTokens + run.outputTokens / 2)
    return staggeredStarts(streams, staggerSpreadMs(oneRequestMs, null), run.seed)
  }
  const scrapes: ScrapeOk[] = []
  const scrape = (): void => {
    if (metrics === null) return
    const { values } = mapScrape(parseExposition(metrics.render(target.stats())))
    scrapes.push({
      kind: 'scrape',
      url: 'http://sim/metrics',
      at: clock.now(),
      duration_ms: 0,
      values,
      run: runId,
    })
  }
  // Re-armed only while the engine has work, so the clock runs out when the block is done.
  const scrapeWhileBusy = (every: number): void => {
    clock.after(every, () => {
      scrape()
      const { running, waiting } = target.stats()
      if (running + waiting > 0) scrapeWhileBusy(every)
    })
  }
  const block = (streams: number, requests: number, stamp: BlockStamp): RequestRecord[] => {
    scrape()
    if (run.scrapeEveryMs !== undefined) scrapeWhileBusy(run.scrapeEveryMs)
    if (targets.length === 1) {
      const started = target.start(streams, requests, stamp, staggered(0, streams))
      clock.runAll()
      return started
    }
    // The run's split: each endpoint keeps its own streams, its requests in proportion to them.
    const shares = targetStreams(
      streams,
      targets.map(() => 1),
    )
    const counts = splitProportionally(requests, shares)
    const started = targets.map((each, endpoint) => {
      const streamsOf = shares[endpoint] as number
      const starts = staggered(endpoint, streamsOf)
      return each.start(
        streamsOf,
        counts[endpoint] as number,
        { ...stamp, target: { endpoint, model: 0 } },
        starts,
      )
    })
    clock.runAll()
    return started.flat()
  }
  // The run clock of a real run starts near a second in (the process's own start-up).
  clock.advanceBy(1_000)
  const repeat = run.repeat ?? 1
  const records: RequestRecord[] = []
  const levelsRun: number[] = []
  for (const input of run.calibrate ?? []) {
    scrape()
    const probe = target.start(1, 1, { level: 0, phase: 'calibration', run: runId }, undefined, {
      input,
      output: 1,
    })
    clock.runAll()
    records.push(...probe)
  }
  const measure = (level: number): void => {
    levelsRun.push(level)
    for (let r = 0; r < repeat; r++)
      records.push(
        ...block(level, run.requests, {
          level,
          phase: 'measure',
          run: runId,
          ...(repeat > 1 ? { repeat: r } : {}),
        }),
      )
  }
  const metaOf = (levels: readonly number[]): RunMeta => ({
    ...template.meta,
    ...(targets.length > 1
      ? {
          split: {
            endpoints: servers.map((_, i) => ({ url: `http://sim-${i}/v1`, weight: 1, slots: null })),
            models: [{ id: template.meta.target.model, weight: 1 }],
          },
        }
      : {}),
    slo: { ...run.slo },
    workload: { ...template.meta.workload, input_tokens: run.inputTokens, output_tokens: run.outputTokens },
    load: {
      ...template.meta.load,
      levels: [...levels],
      requests_per_level: run.requests,
      ...(repeat > 1 ? { repeat } : {}),
      ...(run.search === undefined ? {} : { search: run.search }),
    },
    levels_run: levels.map((value) => levelRun(template, value)),
    ...(run.scrapeEveryMs === undefined ? {} : { server_metrics: { interval_s: run.scrapeEveryMs / 1000 } }),
  })
  if (run.search === undefined) for (const level of run.levels ?? []) measure(level)
  else {
    // --search as runLoad drives it: the ladder until bracketed, probes inside the bracket, the
    // answer measured again; each choice made by the search's own functions on the result so far.
    const plan = run.search
    const judged = (): BenchResult => buildResult(records, metaOf(levelsRun))
    for (const level of bracketLadder(plan.range)) {
      measure(level)
      const { levels, saturation } = judged()
      if (bracketed(plan, levels, saturation)) break
    }
    for (let step = 0; step < MAX_SEARCH_PROBES; step++) {
      const { levels, saturation } = judged()
      const probe = nextProbe(plan, 'concurrency', levels, saturation)
      if (probe === null) break
      measure(probe.value)
    }
    const { levels, saturation } = judged()
    const answer = searchOutcome(plan, 'concurrency', levels, saturation).value
    if (plan.target === 'slo' && answer !== null)
      records.push(
        ...block(answer, controlRequests(run.requests, answer), {
          level: answer,
          phase: 'recheck',
          run: runId,
        }),
      )
  }
  const first = levelsRun[0] as number
  if (run.control !== false)
    records.push(
      ...block(first, controlRequests(run.requests, first), {
        level: first,
        phase: 'control',
        run: runId,
      }),
    )
  // Each endpoint numbers its own requests: the run numbers them all.
  if (targets.length > 1) for (const [seq, record] of records.entries()) record.seq = seq
  const meta = metaOf(levelsRun)
  const result = buildResult(records, meta, scrapes)
  cpSync(TEMPLATE, dir, { recursive: true, filter: (path) => !path.includes('expected') })
  rmSync(join(dir, SERVER_METRICS_FILE), { force: true })
  writeFileSync(join(dir, RECORDS_FILE), lines(records))
  if (scrapes.length > 0) writeFileSync(join(dir, SERVER_METRICS_FILE), lines(scrapes))
  writeFileSync(join(dir, RESULT_FILE), JSON.stringify(result))
  return result
}

/** Counts the requests as they get a slot and multiplies the costs from request `after_requests` + 1 on. */
function slowingDown(
  slowdown: SimSlowdown | undefined,
  change: CostChange,
  next: EngineObserver | null,
): EngineObserver | null {
  if (slowdown === undefined) return next
  let admitted = 0
  return {
    admitted(queuedMs) {
      admitted++
      if (admitted === slowdown.after_requests + 1) {
        change.decode = slowdown.factor
        change.prefill = slowdown.factor
      }
      next?.admitted(queuedMs)
    },
    firstToken: (inputTokens, ttftMs) => next?.firstToken(inputTokens, ttftMs),
    nextToken: (gapMs) => next?.nextToken(gapMs),
    completed: (e2eMs) => next?.completed(e2eMs),
  }
}

/** The template's client figures of a level, or of its last level for one past them. */
function levelRun(template: BenchResult, value: number): BenchResult['meta']['levels_run'][number] {
  const levels = template.meta.levels_run
  const own = levels.find((level) => level.value === value)
  return own ?? { ...(levels[levels.length - 1] as (typeof levels)[number]), value }
}

function lines(values: readonly object[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join('')
}
