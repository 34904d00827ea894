import { existsSync } from 'node:fs'
import { readRecords } from './jsonl-reader.js'
import { type OneRun, recordsOfOneRun } from './run-identity.js'

/**
 * The records of one run from a requests.jsonl (the run `runId` names; see recordsOfOneRun), and
 * whether its last line was cut short; null when there is no such file.
 */
export function readRunRecords(
  path: string,
  runId: string | undefined,
): (OneRun & { tornLastLine: boolean }) | null {
  if (!existsSync(path)) return null
  const read = readRecords(path)
  return { ...recordsOfOneRun(read.records, runId, path), tornLastLine: read.tornLastLine }
}
