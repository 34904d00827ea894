import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LoadMode } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'

export const HISTORY_FILE = 'history.jsonl'

/** One run, as the history keeps it: enough for a release-over-release trend. */
export interface HistoryEntry {
  started_at: string
  tool_version: string
  model: string
  base_url: string
  input_tokens: number
  output_tokens: number
  /**
   * What the level values below count (streams or requests per second); null on lines written
   * before it was recorded, when a level value was called `concurrency` whatever the mode.
   */
  mode: LoadMode | null
  /** Level values, as `mode` says. */
  saturation: number | null
  capacity: number | null
  levels: {
    value: number
    ttft_p95_ms: number | null
    output_tokens_per_s: number
    success_rate: number
  }[]
}

export function historyEntry(result: BenchResult): HistoryEntry {
  return {
    started_at: result.meta.started_at,
    tool_version: result.meta.tool_version,
    model: result.meta.target.model,
    base_url: result.meta.target.base_url,
    input_tokens: result.meta.workload.input_tokens,
    output_tokens: result.meta.workload.output_tokens,
    mode: result.meta.load.mode,
    saturation: result.saturation?.value ?? null,
    capacity: result.capacity?.value ?? null,
    levels: result.levels.map((level) => ({
      value: level.value,
      ttft_p95_ms: level.ttft_ms.p95 ?? null,
      output_tokens_per_s: level.output_tokens_per_s,
      success_rate: level.success_rate,
    })),
  }
}

export function appendHistory(dir: string, result: BenchResult): string {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, HISTORY_FILE)
  appendFileSync(path, `${JSON.stringify(historyEntry(result))}\n`)
  return path
}

export function readHistory(dir: string): HistoryEntry[] {
  const path = join(dir, HISTORY_FILE)
  if (!existsSync(path))
    throw new Error(`${dir}: no ${HISTORY_FILE} (runs with --history ${dir} append to it)`)
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      let entry: HistoryEntry | OldHistoryEntry
      try {
        entry = JSON.parse(line)
      } catch {
        throw new Error(`${path}: line ${index + 1} is not a JSON history entry`)
      }
      return upgradeHistoryEntry(entry)
    })
}

/** A history line as runs before llmbench.result/2 appended it: no mode, each level's value called `concurrency`. */
type OldHistoryEntry = Omit<HistoryEntry, 'mode' | 'levels'> & {
  levels: (Omit<HistoryEntry['levels'][number], 'value'> & { concurrency: number })[]
}

/** Old lines and new ones stay in the same file (it is only ever appended to): read both as today's. */
function upgradeHistoryEntry(entry: HistoryEntry | OldHistoryEntry): HistoryEntry {
  if ('mode' in entry) return entry
  return {
    ...entry,
    mode: null,
    levels: entry.levels.map(({ concurrency, ...figures }) => ({ value: concurrency, ...figures })),
  }
}

/** The trend across runs: saturation, capacity, peak throughput and TTFT p95 at the widest common level. */
export function renderHistory(entries: readonly HistoryEntry[]): string {
  const lines = [
    '| run started | version | model | saturation | capacity | peak output tok/s | TTFT p95 ms at widest level |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const entry of entries) {
    const peak = Math.max(0, ...entry.levels.map((level) => level.output_tokens_per_s))
    const widest = entry.levels.reduce<HistoryEntry['levels'][number] | null>(
      (a, b) => (a === null || b.value > a.value ? b : a),
      null,
    )
    lines.push(
      `| ${entry.started_at} | ${entry.tool_version} | ${entry.model} | ${entry.saturation ?? 'none'} | ${entry.capacity ?? '–'} | ` +
        `${peak.toFixed(1)} | ${widest === null ? '–' : `${widest.ttft_p95_ms?.toFixed(0) ?? '–'} (c=${widest.value})`} |`,
    )
  }
  return `${lines.join('\n')}\n`
}
