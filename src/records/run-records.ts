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
 * `checked` false: the lines are only parsed, for a file this process wrote itself a moment ago (a
 * run's report): the schema check is a quarter of a second per 4096 records and finds nothing there.
 */
export function readRunRecords(
  path: string,
  runId: string | undefined,
  checked = true,
): (OneRun & { tornLastLine: boolean; bad: BadLines | null }) | null {
  if (!existsSync(path)) return null
  const read = readCheckedLines<RequestRecord>(path, (value) =>
    checked ? firstSchemaIssue(recordSchema(), value) : null,
  )
  return { ...recordsOfOneRun(read.items, runId, path), tornLastLine: read.tornLastLine, bad: read.bad }
}
