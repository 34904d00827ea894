import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { printable } from '../printable.js'
import type { BadLines } from '../records/jsonl-reader.js'
import { readRunRecords } from '../records/run-records.js'
import type { RequestRecord } from '../records/types.js'
import { firstSchemaIssue } from '../schema-issue.js'
import { readScrapeLines, type ServerScrape } from '../server-metrics/scrape-file.js'
import { fileKind } from '../text-file.js'
import { type BenchResult, RESULT_SCHEMA } from './bench-result.js'
import { RECORDS_FILE, RESULT_FILE, SERVER_METRICS_FILE } from './folder-layout.js'
import { type StoredSchema, storedResultSchema } from './result-schema.js'
import { RESULT_SCHEMA_V1, upgradeResult } from './upgrade.js'

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
  /** Lines of requests.jsonl and server-metrics.jsonl that were not records or scrapes, left out (badLines 'skip'). */
  badLines?: { records: BadLines | null; scrapes: BadLines | null }
}

/**
 * What a bad line of requests.jsonl or server-metrics.jsonl does: `refuse` the folder (compare and
 * merge: a gate must not decide on a sample someone edited), or `skip` it, the caller saying how
 * many and the first (report: the figures of the good lines are still worth showing).
 */
export type BadLinePolicy = 'refuse' | 'skip'

/** A result folder that cannot be read as one: the message names the file, the line and the field. */
export class ResultFolderError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ResultFolderError'
  }
}

/**
 * A result folder, or its bench_result.json (any name): the summary plus the raw records beside it,
 * every file checked against its schema (result-schema.ts, record-schema.ts, scrape-schema.ts) so a
 * tampered or broken one is refused with what is wrong where, not read as something else. The
 * summary is today's model also when an older llmbench wrote it (see upgradeResult).
 */
export function loadRun(path: string, badLines: BadLinePolicy = 'refuse'): LoadedRun {
  const kind = fileKind(path)
  if (kind === null) throw new ResultFolderError(`${path}: no such file or folder`)
  const isDir = kind === 'a directory'
  if (!isDir && kind !== 'a regular file')
    throw new ResultFolderError(`${path}: ${kind}, not a result folder or a bench_result.json`)
  const dir = isDir ? path : dirname(path)
  const resultFile = isDir ? join(dir, RESULT_FILE) : path
  const result = readSummary(dir, resultFile)
  // Never mix runs: keep the one the summary describes, or refuse (MixedRunsError) when unsure.
  const recordsFile = join(dir, RECORDS_FILE)
  const run = readRunRecords(checkedFile(recordsFile), result.meta.run_id)
  if (run === null) return { dir, resultFile, result, records: null, tornLastLine: false, otherRunRecords: 0 }
  const scrapes = readScrapeLines(checkedFile(join(dir, SERVER_METRICS_FILE)), result.meta.run_id)
  // A file of nothing but bad lines has no good lines to report from.
  const none = run.records.length === 0 && run.bad !== null
  if (badLines === 'refuse' || none) refuseBadLines(recordsFile, run.bad, none)
  if (badLines === 'refuse') refuseBadLines(join(dir, SERVER_METRICS_FILE), scrapes.bad, false)
  return {
    dir,
    resultFile,
    result,
    records: run.records,
    tornLastLine: run.tornLastLine,
    otherRunRecords: run.ignored,
    serverScrapes: scrapes.scrapes,
    badLines: { records: run.bad, scrapes: scrapes.bad },
  }
}

/** bench_result.json parsed, checked against the schema it names, and upgraded to today's model. */
function readSummary(dir: string, resultFile: string): BenchResult {
  const kind = fileKind(resultFile)
  if (kind === null)
    throw new ResultFolderError(
      `${dir}: no ${RESULT_FILE} (give the summary file itself if it has another name)`,
    )
  checkedFile(resultFile)
  let json: unknown
  try {
    json = JSON.parse(readFileSync(resultFile, 'utf8'))
  } catch (error) {
    // The parser quotes the file: one line, no control bytes.
    const why = printable(error instanceof Error ? error.message : String(error)).replaceAll('\n', '\\n')
    throw new ResultFolderError(`${resultFile}: not JSON (${why})`)
  }
  const version = storedSchemaOf(json)
  // An unknown schema is upgradeResult's to name.
  if (version === null) return upgradeResult(json, resultFile)
  const issue = firstSchemaIssue(storedResultSchema(version), json)
  if (issue !== null) throw new ResultFolderError(`${resultFile}: ${issue}`)
  return upgradeResult(json, resultFile)
}

function storedSchemaOf(json: unknown): StoredSchema | null {
  const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined
  return schema === RESULT_SCHEMA || schema === RESULT_SCHEMA_V1 ? schema : null
}

/** `path` when it is a regular file or absent; anything else (a folder, a FIFO) is refused by name. */
function checkedFile(path: string): string {
  const kind = fileKind(path)
  if (kind !== null && kind !== 'a regular file')
    throw new ResultFolderError(`${path}: ${kind}, expected a file`)
  return path
}

function refuseBadLines(file: string, bad: BadLines | null, none: boolean): void {
  if (bad === null) return
  const others = bad.count > 1 ? ` (and ${bad.count - 1} other bad line(s))` : ''
  const why = none ? '; no line of it is a record, so there is nothing to report from' : ''
  throw new ResultFolderError(`${file}: line ${bad.first.line}: ${bad.first.problem}${others}${why}`)
}

/** The note report prints for lines it left out: how many, and the first with what is wrong. */
export function badLinesNote(file: string, bad: BadLines): string {
  return `${file}: ${bad.count} bad line(s) left out, the first at line ${bad.first.line}: ${bad.first.problem}`
}
