import { extname } from 'node:path'
import { printable } from '../printable.js'
import { NotTextError, readTextFile } from '../text-file.js'

/**
 * Public serving traces read into one shape: when each request arrived and how long its prompt and
 * answer were. Three formats, told apart by their content (the extension only breaks a tie):
 *
 * - Mooncake JSONL (kvcache-ai/Mooncake FAST'25 traces): `timestamp` in ms, `input_length`,
 *   `output_length`, `hash_ids` (one id per 512-token block of the prompt: equal ids, equal blocks);
 * - BurstGPT CSV: `Timestamp` in seconds, `Model`, `Request tokens`, `Response tokens`, `Total tokens`,
 *   `Log Type`;
 * - the Azure LLM inference CSVs (2023 and 2024): `TIMESTAMP` as a date-time with sub-second digits,
 *   `ContextTokens`, `GeneratedTokens`.
 */
export type TraceFormat = 'mooncake' | 'burstgpt' | 'azure'

export interface TraceRow {
  /** Arrival on the trace's own clock, ms (any origin: only differences are used). */
  at_ms: number
  input_tokens: number
  output_tokens: number
  /** Mooncake: the prompt's 512-token blocks, by content hash. */
  hash_ids?: number[]
  /** 1-based line in the file, for messages. */
  line: number
}

export interface TraceFile {
  path: string
  format: TraceFormat
  /** Usable rows, in file order. */
  rows: TraceRow[]
  /** Rows left out, and why (BurstGPT's failed requests). */
  skipped: { count: number; reason: string } | null
}

/**
 * The longest trace a run replays on its own clock: a month. Public traces span hours to weeks; a
 * timestamp past this (1e308 in a hand-edited row) would have the run wait for ages, so it is refused
 * with its line before anything is sent.
 */
export const MAX_TRACE_SPAN_DAYS = 31
const MAX_TRACE_SPAN_MS = MAX_TRACE_SPAN_DAYS * 24 * 3600 * 1000

/** Tokens per Mooncake hash block (the trace's own block size). */
export const MOONCAKE_BLOCK_TOKENS = 512

export class TraceError extends Error {
  override name = 'TraceError'
}

const BURSTGPT_COLUMNS = ['Timestamp', 'Request tokens', 'Response tokens'] as const
const AZURE_COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const

export function loadTraceFile(path: string): TraceFile {
  let text: string
  try {
    text = readTextFile(path)
  } catch (error) {
    if (error instanceof NotTextError)
      throw new TraceError(
        `trace ${path}: ${error.message}; expected Mooncake JSONL or a BurstGPT or Azure CSV`,
      )
    throw new TraceError(`trace ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error})`)
  }
  return parseTrace(path, text)
}

/** Parses a trace's text; `path` names it in messages and breaks the tie of an empty file. */
export function parseTrace(path: string, text: string): TraceFile {
  const trace = parseRows(path, text)
  checkSpan(trace)
  return trace
}

/** A month at most between the earliest row and any other; the first row past it is named. */
function checkSpan({ path, rows }: TraceFile): void {
  const origin = rows.reduce((min, row) => Math.min(min, row.at_ms), Number.POSITIVE_INFINITY)
  const far = rows.find((row) => row.at_ms - origin > MAX_TRACE_SPAN_MS)
  if (far !== undefined)
    throw new TraceError(
      `trace ${path}:${far.line}: timestamp ${(far.at_ms - origin) / 1000} s after the trace's earliest row; ` +
        `expected a trace spanning at most ${MAX_TRACE_SPAN_DAYS} days`,
    )
}

function parseRows(path: string, text: string): TraceFile {
  const lines = text.split(/\r?\n/)
  const first = lines.findIndex((line) => line.trim() !== '')
  if (first === -1) throw new TraceError(`trace ${path}: the file is empty`)
  const head = (lines[first] as string).trim()
  if (head.startsWith('{')) return { path, format: 'mooncake', ...parseMooncake(path, lines) }
  const columns = splitCsv(head)
  if (AZURE_COLUMNS.every((name) => columns.includes(name)))
    return { path, format: 'azure', ...parseCsv(path, lines, first, columns, azureRow) }
  if (BURSTGPT_COLUMNS.every((name) => columns.includes(name)))
    return { path, format: 'burstgpt', ...parseCsv(path, lines, first, columns, burstRow) }
  const ext = extname(path).toLowerCase()
  const expected =
    ext === '.jsonl' || ext === '.json'
      ? 'Mooncake JSONL lines ({"timestamp", "input_length", "output_length", "hash_ids"})'
      : `a CSV header with ${AZURE_COLUMNS.join(',')} (Azure LLM inference) or ${BURSTGPT_COLUMNS.join(',')} (BurstGPT)`
  throw new TraceError(
    `trace ${path}:${first + 1}: expected ${expected}, got "${printable(head.slice(0, 80))}"`,
  )
}

type Parsed = Pick<TraceFile, 'rows' | 'skipped'>

function parseMooncake(path: string, lines: readonly string[]): Parsed {
  const rows: TraceRow[] = []
  lines.forEach((text, index) => {
    if (text.trim() === '') return
    const line = index + 1
    const fail = (what: string): never => {
      throw new TraceError(`trace ${path}:${line}: ${what}`)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      fail('not a JSON object')
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('not a JSON object')
    const row = value as Record<string, unknown>
    const at = timestamp(row.timestamp) ?? fail('expected "timestamp" as a number of ms, 0 or more')
    const input = count(row.input_length) ?? fail('expected "input_length" as a positive whole number')
    const output = count(row.output_length) ?? fail('expected "output_length" as a positive whole number')
    const hashes = row.hash_ids
    if (hashes !== undefined && !(Array.isArray(hashes) && hashes.every((id) => Number.isSafeInteger(id))))
      fail('expected "hash_ids" as a list of whole numbers')
    rows.push({
      at_ms: at,
      input_tokens: input,
      output_tokens: output,
      ...(hashes === undefined ? {} : { hash_ids: hashes as number[] }),
      line,
    })
  })
  return { rows, skipped: null }
}

/** One CSV data row to a trace row; null = skipped (a failed request); a string = what is wrong. */
type RowReader = (cell: (name: string) => string, line: number) => TraceRow | null | string

function parseCsv(
  path: string,
  lines: readonly string[],
  headerIndex: number,
  columns: readonly string[],
  read: RowReader,
): Parsed {
  const rows: TraceRow[] = []
  let skipped = 0
  for (let index = headerIndex + 1; index < lines.length; index++) {
    const text = (lines[index] as string).trim()
    if (text === '') continue
    const cells = splitCsv(text)
    const cell = (name: string): string => cells[columns.indexOf(name)] ?? ''
    const row = read(cell, index + 1)
    if (typeof row === 'string') throw new TraceError(`trace ${path}:${index + 1}: ${row}`)
    if (row === null) skipped++
    else rows.push(row)
  }
  return {
    rows,
    skipped:
      skipped === 0
        ? null
        : {
            count: skipped,
            reason: 'rows with 0 output tokens (failed requests in BurstGPT): no answer length to ask for',
          },
  }
}

function azureRow(cell: (name: string) => string, line: number): TraceRow | null | string {
  const at = parseDateTimeMs(cell('TIMESTAMP'))
  if (at === null)
    return `expected TIMESTAMP as a date-time such as 2023-11-16 18:15:46.6805900, got "${cell('TIMESTAMP')}"`
  const input = count(Number(cell('ContextTokens')))
  if (input === null)
    return `expected ContextTokens as a positive whole number, got "${cell('ContextTokens')}"`
  if (cell('GeneratedTokens') === '0') return null
  const output = count(Number(cell('GeneratedTokens')))
  if (output === null)
    return `expected GeneratedTokens as a positive whole number, got "${cell('GeneratedTokens')}"`
  return { at_ms: at, input_tokens: input, output_tokens: output, line }
}

function burstRow(cell: (name: string) => string, line: number): TraceRow | null | string {
  const text = cell('Timestamp')
  const at = text === '' ? null : timestamp(Number(text) * 1000)
  if (at === null) return `expected Timestamp as a number of seconds, 0 or more, got "${text}"`
  const input = count(Number(cell('Request tokens')))
  if (input === null)
    return `expected Request tokens as a positive whole number, got "${cell('Request tokens')}"`
  const response = Number(cell('Response tokens'))
  // BurstGPT marks a failed request with 0 response tokens: skipped (and counted), not sent with a
  // made-up length.
  if (response === 0 && cell('Response tokens') !== '') return null
  const output = count(response)
  if (output === null) return `expected Response tokens as a whole number, got "${cell('Response tokens')}"`
  return { at_ms: at, input_tokens: input, output_tokens: output, line }
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z?$/

/**
 * "2023-11-16 18:15:46.6805900" as ms, read as UTC (only differences matter). Date.parse would drop
 * the digits past the third and read a zone-less time in the local zone.
 */
export function parseDateTimeMs(text: string): number | null {
  const match = DATE_TIME.exec(text.trim())
  if (match === null) return null
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[]
  const whole = Date.UTC(year as number, (month as number) - 1, day, hour, minute, second)
  if (Number.isNaN(whole)) return null
  return whole + (match[7] === undefined ? 0 : Number(`0.${match[7]}`) * 1000)
}

/** Splits a CSV line on commas, honouring double quotes (a Model name may carry a comma). */
function splitCsv(line: string): string[] {
  const cells: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"'
        i++
      } else if (ch === '"') quoted = false
      else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      cells.push(cell.trim())
      cell = ''
    } else cell += ch
  }
  cells.push(cell.trim())
  return cells
}

/** A point on the trace's clock: finite (seconds of 1e308 overflow to Infinity in ms) and not negative. */
function timestamp(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null
}
