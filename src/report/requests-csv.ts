import type { RequestRecord } from '../records/types.js'
import { csvRow } from './csv.js'
import { REQUEST_COLUMNS } from './request-columns.js'

/** requests.csv: every record of requests.jsonl as one row of REQUEST_COLUMNS, header first. */
export function renderRequestsCsv(records: readonly RequestRecord[]): string {
  const rows = [csvRow(REQUEST_COLUMNS.map((column) => column.name))]
  for (const record of records) rows.push(csvRow(REQUEST_COLUMNS.map((column) => column.value(record))))
  return rows.join('')
}
