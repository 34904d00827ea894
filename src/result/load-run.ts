import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readRunRecords } from '../records/run-records.js'
import type { RequestRecord } from '../records/types.js'
import { readServerScrapes, type ServerScrape } from '../server-metrics/scrape-file.js'
import type { BenchResult } from './bench-result.js'
import { RECORDS_FILE, RESULT_FILE, SERVER_METRICS_FILE } from './folder-layout.js'
import { upgradeResult } from './upgrade.js'

export interface LoadedRun {
  dir: string
  resultFile: string
  result: BenchResult
  /** null when the folder has no requests.jsonl (an old or copied summary). */
  records: RequestRecord[] | null
  tornLastLine: boolean
  /** Records of other runs in the same requests.jsonl, left out (0 when there were none). */
  otherRunRecords?: number
  /** The server's scrapes (server-metrics.jsonl); [] when the run scraped none. */
  serverScrapes?: ServerScrape[]
}

/**
 * A result folder, or its bench_result.json (any name): the summary plus the raw records beside it.
 * The summary is today's model also when an older llmbench wrote it (see upgradeResult).
 */
export function loadRun(path: string): LoadedRun {
  if (!existsSync(path)) throw new Error(`${path}: no such file or folder`)
  const isDir = statSync(path).isDirectory()
  const dir = isDir ? path : dirname(path)
  const resultFile = isDir ? join(dir, RESULT_FILE) : path
  if (!existsSync(resultFile))
    throw new Error(`${dir}: no ${RESULT_FILE} (give the summary file itself if it has another name)`)
  let json: unknown
  try {
    json = JSON.parse(readFileSync(resultFile, 'utf8'))
  } catch (error) {
    throw new Error(`${resultFile}: not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const result: BenchResult = upgradeResult(json, resultFile)
  // Never mix runs: keep the one the summary describes, or refuse (MixedRunsError) when unsure.
  const run = readRunRecords(join(dir, RECORDS_FILE), result.meta.run_id)
  if (run === null) return { dir, resultFile, result, records: null, tornLastLine: false, otherRunRecords: 0 }
  const serverScrapes = readServerScrapes(join(dir, SERVER_METRICS_FILE), result.meta.run_id)
  return {
    dir,
    resultFile,
    result,
    records: run.records,
    tornLastLine: run.tornLastLine,
    otherRunRecords: run.ignored,
    serverScrapes,
  }
}
