import type { RequestRecord } from '../records/types.js'
import { TOOL_VERSION } from '../version.js'
import { type ColumnType, REQUEST_COLUMNS } from './request-columns.js'

/**
 * requests.parquet: the same columns as requests.csv, typed (INT64, DOUBLE, UTF-8 strings, nulls
 * where a record lacks a field), snappy-compressed, written with hyparquet-writer (pure JS, no
 * native build). Loaded on demand: only runs that ask for Parquet pay for the module.
 */
export async function writeRequestsParquet(path: string, records: readonly RequestRecord[]): Promise<void> {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const columnData = REQUEST_COLUMNS.map((column) => {
    const values = records.map(column.value)
    return { name: column.name, ...typed(column.type, values) }
  })
  parquetWriteFile({ filename: path, columnData, createdBy: `llmbench ${TOOL_VERSION}` })
}

type Typed =
  | { type: 'INT64'; data: (bigint | null)[] }
  | { type: 'DOUBLE'; data: (number | null)[] }
  | { type: 'STRING'; data: (string | null)[] }

/**
 * A count column is INT64 when every value is a whole number; one that is not (a server's odd
 * report) makes the column DOUBLE rather than lose the value.
 */
function typed(type: ColumnType, values: (string | number | null)[]): Typed {
  if (type === 'string') return { type: 'STRING', data: values.map((v) => (v === null ? null : String(v))) }
  const numbers = values.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null))
  if (type === 'int' && numbers.every((v) => v === null || Number.isSafeInteger(v)))
    return { type: 'INT64', data: numbers.map((v) => (v === null ? null : BigInt(v))) }
  return { type: 'DOUBLE', data: numbers }
}
