import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { RequestRecord } from '../../src/records/types.js'
import { csvField, csvRow } from '../../src/report/csv.js'
import { REQUEST_COLUMNS } from '../../src/report/request-columns.js'
import { renderRequestsCsv } from '../../src/report/requests-csv.js'
import { writeRequestsParquet } from '../../src/report/requests-parquet.js'
import { appendStepSummary } from '../../src/report/step-summary.js'
import { SUMMARY_FILE } from '../../src/result/folder-layout.js'
import { makeRecord } from '../helpers/records.js'
import { tempDir } from '../helpers/run-config.js'

/** An RFC 4180 reader, independent of the writer: quoted fields may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i++
    } else field += c
  }
  assert.equal(field, '', 'the last record ends with CRLF')
  return rows
}

/** Records that exercise every kind of column: a failure with an awkward message, reasoning, llama.cpp timings. */
function awkwardRecords(): RequestRecord[] {
  const ok = makeRecord({ seq: 7, sent_at: 1000.123456789, token_times: [1012.000000001, 1020.5, 1033.25] })
  ok.server_timings = {
    prompt_n: 12,
    prompt_ms: 3.3333333333333335,
    predicted_n: 3,
    predicted_ms: 20.1,
    cache_n: null,
  }
  ok.reasoning_output_tokens = 1
  ok.reasoning_token_source = 'usage'
  ok.run = 'abc123'
  const failed = makeRecord({
    seq: 8,
    level: 0.5,
    sent_at: 2000,
    status: 500,
    error: { class: 'http_5xx', message: 'upstream said "no", then\r\nclosed, twice' },
    input_tokens: null,
  })
  failed.session = 's,1'
  failed.turn = 2
  return [ok, failed]
}

test('a CSV field is quoted exactly when RFC 4180 needs it, quotes doubled; null is empty; numbers keep every digit', () => {
  assert.equal(csvField('plain'), 'plain')
  assert.equal(csvField('a,b'), '"a,b"')
  assert.equal(csvField('say "hi"'), '"say ""hi"""')
  assert.equal(csvField('two\nlines'), '"two\nlines"')
  assert.equal(csvField(null), '')
  assert.equal(csvField(0.1 + 0.2), '0.30000000000000004')
  assert.equal(csvRow(['a', 1, null, true]), 'a,1,,true\r\n')
})

test('requests.csv: one row per record, flat columns, read back by an RFC 4180 parser to the same values', () => {
  const records = awkwardRecords()
  const rows = parseCsv(renderRequestsCsv(records))
  assert.deepEqual(
    rows[0],
    REQUEST_COLUMNS.map((column) => column.name),
  )
  assert.equal(rows.length, 1 + records.length)
  const at = (row: number, name: string) => rows[row]?.[REQUEST_COLUMNS.findIndex((c) => c.name === name)]
  assert.equal(Number(at(1, 'sent_at_ms')), 1000.123456789, 'no digits lost')
  assert.equal(Number(at(1, 'token_time_first_ms')), 1012.000000001)
  assert.equal(at(1, 'token_times_count'), '3')
  assert.equal(Number(at(1, 'token_time_last_ms')), 1033.25)
  assert.equal(Number(at(1, 'server_prompt_ms')), 3.3333333333333335)
  assert.equal(at(1, 'server_cache_n'), '', 'null is an empty field')
  assert.equal(at(2, 'error_message'), 'upstream said "no", then\r\nclosed, twice')
  assert.equal(at(2, 'error_class'), 'http_5xx')
  assert.equal(at(2, 'session'), 's,1')
  assert.equal(at(2, 'level'), '0.5')
  assert.equal(at(2, 'input_tokens'), '')
  for (const row of rows) assert.equal(row.length, REQUEST_COLUMNS.length, 'every row has every column')
})

interface ReadBack {
  types: Record<string, string | undefined>
  rows: Record<string, unknown>[]
}

/**
 * Writes the records as requests.parquet and reads the file back with hyparquet: hyparquet-writer's
 * own dependency (the reader it is tested with), not llmbench's; null when it does not resolve.
 */
async function writeAndReadBack(records: RequestRecord[]): Promise<ReadBack | null> {
  let hyparquet: typeof import('hyparquet')
  try {
    hyparquet = await import('hyparquet')
  } catch {
    return null
  }
  const path = join(tempDir(), 'requests.parquet')
  await writeRequestsParquet(path, records)
  const file = await hyparquet.asyncBufferFromFile(path)
  const metadata = await hyparquet.parquetMetadataAsync(file)
  assert.equal(Number(metadata.num_rows), records.length)
  const types = Object.fromEntries(metadata.schema.slice(1).map((element) => [element.name, element.type]))
  return { types, rows: (await hyparquet.parquetReadObjects({ file })) as Record<string, unknown>[] }
}

const NO_READER = 'hyparquet (a dependency of hyparquet-writer) does not resolve here'

test("requests.parquet: typed columns (INT64, DOUBLE, UTF-8, nulls) that hyparquet reads back to the records' values", async (t) => {
  const read = await writeAndReadBack(awkwardRecords())
  if (read === null) return t.skip(NO_READER)
  const { types, rows } = read
  assert.equal(types.seq, 'INT64')
  assert.equal(types.sent_at_ms, 'DOUBLE')
  assert.equal(types.level, 'DOUBLE')
  assert.equal(types.error_message, 'BYTE_ARRAY')
  assert.equal(rows[0]?.seq, 7n)
  assert.equal(rows[0]?.sent_at_ms, 1000.123456789)
  assert.equal(rows[0]?.server_prompt_ms, 3.3333333333333335)
  assert.equal(rows[0]?.server_cache_n, null)
  assert.equal(rows[0]?.token_times_count, 3n)
  assert.equal(rows[1]?.error_message, 'upstream said "no", then\r\nclosed, twice')
  assert.equal(rows[1]?.input_tokens, null)
  assert.equal(rows[1]?.level, 0.5)
  assert.equal(rows[1]?.turn, 2n)
})

test('requests.parquet: a count column holding a value that is not a whole number is written as DOUBLE, not truncated', async (t) => {
  const read = await writeAndReadBack([makeRecord({ input_tokens: 12.5 })])
  if (read === null) return t.skip(NO_READER)
  assert.equal(read.types.input_tokens, 'DOUBLE')
  assert.equal(read.rows[0]?.input_tokens, 12.5)
  assert.equal(read.types.output_tokens, 'INT64', 'the other count columns stay INT64')
})

test('summary.md is appended to $GITHUB_STEP_SUMMARY when it is set, after what other steps wrote; nothing when unset', () => {
  const dir = tempDir()
  writeFileSync(join(dir, SUMMARY_FILE), '# llmbench\n\n| level | TTFT |\n')
  const target = join(dir, 'step-summary.md')
  writeFileSync(target, 'an earlier step\n')
  assert.equal(appendStepSummary(dir, { GITHUB_STEP_SUMMARY: target }), target)
  assert.equal(readFileSync(target, 'utf8'), 'an earlier step\n# llmbench\n\n| level | TTFT |\n')
  assert.equal(appendStepSummary(dir, {}), null)
  assert.equal(appendStepSummary(dir, { GITHUB_STEP_SUMMARY: '' }), null)
})

/** A second, independent reader when the machine has one: Python's pyarrow, else duckdb. */
function pythonParquetReader(): 'pyarrow' | 'duckdb' | null {
  for (const module of ['pyarrow.parquet', 'duckdb'] as const) {
    const probe = spawnSync('python3', ['-c', `import ${module}`], { stdio: 'ignore' })
    if (probe.status === 0) return module === 'duckdb' ? 'duckdb' : 'pyarrow'
  }
  return null
}

test('requests.parquet: read by Python (pyarrow or duckdb) when installed, to the same rows and values', async (t) => {
  const reader = pythonParquetReader()
  if (reader === null) return t.skip('neither pyarrow nor duckdb is installed for python3')
  const path = join(tempDir(), 'requests.parquet')
  await writeRequestsParquet(path, awkwardRecords())
  const script =
    reader === 'pyarrow'
      ? 'import sys, json, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(json.dumps([t.num_rows, t.column("sent_at_ms")[0].as_py(), t.column("error_message")[1].as_py(), str(t.schema.field("seq").type)]))'
      : 'import sys, json, duckdb; r = duckdb.sql(f"select count(*), first(sent_at_ms), last(error_message), typeof(first(seq)) from \'{sys.argv[1]}\'").fetchone(); print(json.dumps(list(r)))'
  const run = spawnSync('python3', ['-c', script, path], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  const [rows, sentAt, message, seqType] = JSON.parse(run.stdout) as [number, number, string, string]
  assert.equal(rows, 2)
  assert.equal(sentAt, 1000.123456789)
  assert.equal(message, 'upstream said "no", then\r\nclosed, twice')
  assert.match(seqType, /int64|BIGINT/i)
})
