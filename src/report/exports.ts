import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RequestRecord } from '../records/types.js'
import type { BenchResult } from '../result/bench-result.js'
import { LEVELS_CSV_FILE, REQUESTS_CSV_FILE, REQUESTS_PARQUET_FILE } from '../result/folder-layout.js'
import { renderLevelsCsv } from './levels-csv.js'
import { renderRequestsCsv } from './requests-csv.js'
import { writeRequestsParquet } from './requests-parquet.js'

export interface ExportOptions {
  /** Also write requests.parquet (bench.parquet, --parquet). */
  parquet?: boolean
}

/**
 * The tables for other tools, from the summary and this run's records (null when the folder has no
 * requests.jsonl): levels.csv always, requests.csv when there are records, requests.parquet when asked.
 */
export async function writeExports(
  dir: string,
  result: BenchResult,
  records: readonly RequestRecord[] | null,
  options: ExportOptions = {},
): Promise<void> {
  writeFileSync(join(dir, LEVELS_CSV_FILE), renderLevelsCsv(result))
  if (records === null) return
  writeFileSync(join(dir, REQUESTS_CSV_FILE), renderRequestsCsv(records))
  if (options.parquet === true) await writeRequestsParquet(join(dir, REQUESTS_PARQUET_FILE), records)
}
