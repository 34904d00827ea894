import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readRecords } from '../records/jsonl-reader.js'
import { recordsOfOneRun } from '../records/run-identity.js'
import type { BenchResult } from '../result/bench-result.js'
import {
  LEVELS_CSV_FILE,
  RECORDS_FILE,
  REQUESTS_CSV_FILE,
  REQUESTS_PARQUET_FILE,
} from '../result/folder-layout.js'
import { renderLevelsCsv } from './levels-csv.js'
import { renderRequestsCsv } from './requests-csv.js'
import { writeRequestsParquet } from './requests-parquet.js'

export interface ExportOptions {
  /** Also write requests.parquet (bench.parquet, --parquet). */
  parquet?: boolean
}

/**
 * The tables for other tools, from the summary and requests.jsonl: levels.csv always, requests.csv
 * when the folder has records, requests.parquet when asked. Only the records of the run the summary
 * describes are exported (a requests.jsonl holding two runs is never mixed).
 */
export async function writeExports(
  dir: string,
  result: BenchResult,
  options: ExportOptions = {},
): Promise<void> {
  writeFileSync(join(dir, LEVELS_CSV_FILE), renderLevelsCsv(result))
  const recordsFile = join(dir, RECORDS_FILE)
  if (!existsSync(recordsFile)) return
  const { records } = recordsOfOneRun(readRecords(recordsFile).records, result.meta.run_id, recordsFile)
  writeFileSync(join(dir, REQUESTS_CSV_FILE), renderRequestsCsv(records))
  if (options.parquet === true) await writeRequestsParquet(join(dir, REQUESTS_PARQUET_FILE), records)
}
