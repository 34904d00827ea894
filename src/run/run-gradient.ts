import { mkdirSync } from 'node:fs'
import { availableParallelism, hostname } from 'node:os'
import { join } from 'node:path'
import { displayUrl } from '../client/redact.js'
import type { RunConfig } from '../config/types.js'
import { ClientMonitor } from '../metrics/client-health.js'
import { JsonlWriter } from '../records/jsonl-writer.js'
import type { RequestRecord } from '../records/types.js'
import { type BenchResult, buildResult, type RunMeta } from '../report/result-json.js'
import { writeJsonAtomic } from '../report/write-json.js'
import { type RunCounters, runLevel } from '../schedule/level-runner.js'
import { TOOL_VERSION } from '../version.js'
import { PromptSource } from '../workload/prompts.js'
import { buildBody } from '../workload/request-body.js'
import { TOKENIZER_NAME } from '../workload/tokenizer.js'
import { type PreflightResult, runPreflight } from './preflight.js'
import type { StopSignal } from './stop-signal.js'
import { closeTarget, createTarget } from './target.js'

export const RECORDS_FILE = 'requests.jsonl'

export interface RunOptions {
  config: RunConfig
  apiKey: string | null
  /** The result folder itself. */
  outDir: string
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void
  /** Set by the CLI's SIGINT handler: stop issuing, drain, write a partial result. */
  stop: StopSignal
}

export type RunOutcome =
  | { kind: 'done'; result: BenchResult; resultPath: string }
  | { kind: 'preflight-failed'; preflight: PreflightResult }

/** The concurrency gradient end to end: preflight, levels, records on disk, summary after each level. */
export async function runGradient(options: RunOptions): Promise<RunOutcome> {
  const { config, apiKey, outDir, log, stop } = options
  mkdirSync(outDir, { recursive: true })
  const writer = new JsonlWriter(join(outDir, RECORDS_FILE))
  const resultPath = join(outDir, config.metrics.output_json)
  const unregister = stop.onFlush(() => writer.flush())
  try {
    if (config.run.preflight) {
      const preflight = await runPreflight(config, apiKey)
      writer.append(preflight.record)
      log(preflight.summary)
      if (!preflight.ok) return { kind: 'preflight-failed', preflight }
    }
    const meta = describeRun(config)
    const prompts = new PromptSource(config.workload.input_tokens)
    const bodies = new Map<number, Buffer>()
    const bodyFor = (promptId: number): Buffer => {
      const key = promptId % 512
      let body = bodies.get(key)
      if (body === undefined) {
        body = buildBody(
          {
            model: config.target.model,
            endpoint: config.target.endpoint,
            stream: config.client.stream,
            maxTokens: config.workload.output_tokens,
          },
          prompts.prompt(key),
        )
        bodies.set(key, body)
      }
      return body
    }
    const records: RequestRecord[] = []
    const counters: RunCounters = { seq: 0, prompt: 0 }
    const monitor = new ClientMonitor()
    let result = buildResult(records, meta)
    for (const concurrency of config.load.levels) {
      if (stop.requested) break
      // Bodies are built before the clock starts, so prompt generation never counts as latency.
      for (let id = counters.prompt; id < counters.prompt + Math.min(512, concurrency * 2); id++) bodyFor(id)
      const target = createTarget(config, apiKey, concurrency)
      monitor.start()
      const levelRecords = await runLevel(
        {
          concurrency,
          requests: config.load.requests_per_level,
          duration_s: config.load.duration_per_level_s,
          warmup: config.load.warmup_requests,
          retry: config.client.retry,
        },
        {
          target,
          counters,
          bodyFor,
          onRecord: (record) => writer.append(record),
          stopRequested: () => stop.requested,
        },
      )
      const client = monitor.stop(1)
      await closeTarget(target)
      writer.flush()
      for (const record of levelRecords) records.push(record)
      meta.levels_run.push({ concurrency, client })
      result = buildResult(records, meta)
      writeJsonAtomic(resultPath, result)
      const level = result.levels.at(-1)
      if (level !== undefined) log(progressLine(level))
    }
    // Interrupted: the level that was running is cut short and later levels are missing.
    meta.partial = stop.requested
    meta.finished_at = new Date().toISOString()
    result = buildResult(records, meta)
    writeJsonAtomic(resultPath, result)
    return { kind: 'done', result, resultPath }
  } finally {
    unregister()
    writer.close()
  }
}

function progressLine(level: BenchResult['levels'][number]): string {
  const ttft = level.ttft_ms.p50 == null ? '-' : `${level.ttft_ms.p50.toFixed(0)} ms`
  return (
    `level ${level.concurrency}: ${level.requests} requests, ${level.failed} failed, ` +
    `TTFT p50 ${ttft}, ${level.output_tokens_per_s.toFixed(1)} tok/s in ${level.duration_s.toFixed(1)} s`
  )
}

function describeRun(config: RunConfig): RunMeta {
  const load: RunMeta['load'] = {
    mode: 'concurrency',
    levels: config.load.levels,
    warmup_requests: config.load.warmup_requests,
    retry: config.client.retry,
    timeout_s: config.client.timeout_s,
  }
  if (config.load.requests_per_level !== null) load.requests_per_level = config.load.requests_per_level
  if (config.load.duration_per_level_s !== null) load.duration_per_level = config.load.duration_per_level_s
  return {
    tool_version: TOOL_VERSION,
    started_at: new Date().toISOString(),
    finished_at: null,
    partial: true,
    target: {
      base_url: displayUrl(config.target.base_url),
      endpoint: config.target.endpoint,
      model: config.target.model,
    },
    workload: {
      input_tokens: config.workload.input_tokens,
      output_tokens: config.workload.output_tokens,
      dataset: 'synthetic (seeded word prompts)',
      tokenizer: TOKENIZER_NAME,
      stream: config.client.stream,
    },
    load,
    client: {
      workers: 1,
      architecture: 'single event loop, undici Pool per level (one keep-alive connection per stream)',
      node_version: process.version,
      cpus: availableParallelism(),
      host: hostname(),
    },
    percentiles: config.metrics.percentiles,
    levels_run: [],
  }
}
