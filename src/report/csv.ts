/**
 * CSV as RFC 4180 writes it: fields separated by commas, records ended by CRLF, and a field quoted
 * (its quotes doubled) when it holds a comma, a quote, CR or LF. Numbers are written with
 * JavaScript's shortest round-trip form, so parsing the text back gives the same double: no digits lost.
 */

export type CsvValue = string | number | boolean | null | undefined

/** One field: null and undefined are empty; a non-finite number (never expected) is empty too. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** One record, CRLF included. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}
