import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { readRecords } from '../records/jsonl-reader.js'
import { recordsOfOneRun } from '../records/run-identity.js'
import type { RequestRecord } from '../records/types.js'
import type { BenchResult } from '../result/bench-result.js'
import { RECORDS_FILE } from '../result/folder-layout.js'

/** The records of the run a summary describes, from its folder's requests.jsonl; null without one. */
export function readRunRecords(dir: string, result: BenchResult): RequestRecord[] | null {
  const path = join(dir, RECORDS_FILE)
  if (!existsSync(path)) return null
  return recordsOfOneRun(readRecords(path).records, result.meta.run_id, path).records
}
