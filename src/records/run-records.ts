import { existsSync } from 'node:fs'
import { firstSchemaIssue } from '../schema-issue.js'
import { type BadLines, readCheckedLines } from './jsonl-reader.js'
import { recordSchema } from './record-schema.js'
import { type OneRun, recordsOfOneRun } from './run-identity.js'
import type { RequestRecord } from './types.js'

/**
 * The records of one run from a requests.jsonl (the run `runId` names; see recordsOfOneRun), each
 * line checked against the record's schema, with whether its last line was cut short and the lines
 * that were not records (left out here; the caller says so or refuses); null when there is no such file.
 */
export function readRunRecords(
  path: string,
  runId: string | undefined,
): (OneRun & { tornLastLine: boolean; bad: BadLines | null }) | null {
  if (!existsSync(path)) return null
  const read = readCheckedLines<RequestRecord>(path, (value) => firstSchemaIssue(recordSchema(), value))
  return { ...recordsOfOneRun(read.items, runId, path), tornLastLine: read.tornLastLine, bad: read.bad }
}
