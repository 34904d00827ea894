import { describeValue } from '../describe-value.js'
import { DATASET_MAX_NESTING, nestingMessage, tooDeep } from '../json-nesting.js'
import { isObject } from '../json-object.js'
import { printable } from '../printable.js'
import type { ChatMessage } from '../protocols/prompt.js'
import type { PromptImage } from '../protocols/prompt-images.js'
import { NotTextError, readTextFile } from '../text-file.js'
import { DatasetImages } from './dataset-images.js'

/**
 * Prompt datasets read from a file: JSONL written by the user, or a ShareGPT JSON dump. Real prompts
 * give a realistic spread of input and output lengths, which the seeded synthetic prompts do not.
 */

export interface DatasetEntry {
  /** 1-based line (JSONL) or array index + 1 (ShareGPT JSON) in the source file, for messages. */
  source_line: number
  /** What is sent (for /v1/completions the caller joins the contents). */
  messages: ChatMessage[]
  /**
   * Output length wanted for this entry when the file gives one (max_tokens/output_tokens field, or
   * the length of the reference reply in ShareGPT, counted with `count`), else null.
   */
  output_tokens: number | null
  /** JSONL `images`: the row's own images, resolved before the run (dataset-images.ts); absent when none. */
  images?: PromptImage[]
}

export interface Dataset {
  path: string
  format: 'jsonl' | 'sharegpt'
  entries: DatasetEntry[]
  /** ShareGPT conversations left out (no human turn, no reply, ...); always 0 for JSONL. */
  skipped: number
}

/** The message names the file, the line (or conversation) and what was expected. */
export class DatasetError extends Error {
  constructor(
    message: string,
    /** Every source line (JSONL) or conversation number (ShareGPT) at fault, including unlisted ones. */
    readonly lines: readonly number[] = [],
  ) {
    super(message)
    this.name = 'DatasetError'
  }
}

/** Bad lines listed in one error; the rest are only counted, so a broken file cannot flood the terminal. */
const MAX_LISTED = 20

const JSONL_SHAPE = '"prompt" (string) or "messages" (array of {role, content})'
const ROLES: readonly ChatMessage['role'][] = ['system', 'user', 'assistant']

/**
 * Reads a dataset. The format comes from the content, not the extension: a file whose first
 * non-space character is `[` is a ShareGPT JSON array, anything else is JSONL. `count` measures
 * ShareGPT reference replies; it is not called for JSONL. With `maxEntries`, reading stops once that
 * many entries are usable, so problems further down a huge file are not looked at.
 */
export function loadDataset(
  path: string,
  count: (text: string) => number,
  options: { maxEntries?: number } = {},
): Dataset {
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY
  if (!(maxEntries === Number.POSITIVE_INFINITY || (Number.isInteger(maxEntries) && maxEntries > 0)))
    throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`)
  const text = readText(path)
  if (text.trim() === '')
    throw new DatasetError(
      `dataset ${path}: the file is empty; expected JSONL (one JSON object per line) or a ShareGPT JSON array`,
    )
  return text.trimStart().startsWith('[')
    ? loadShareGpt(path, text, count, maxEntries)
    : loadJsonl(path, text, maxEntries)
}

export function readText(path: string): string {
  try {
    return readTextFile(path)
  } catch (err) {
    if (err instanceof NotTextError)
      throw new DatasetError(`dataset ${path}: ${err.message}; expected JSONL or a ShareGPT JSON array`)
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new DatasetError(`dataset ${path}: file not found`)
    if (code === 'EISDIR') throw new DatasetError(`dataset ${path}: is a directory, expected a file`)
    throw new DatasetError(`dataset ${path}: cannot read (${(err as Error).message})`)
  }
}

/**
 * Refuses a JSON file or JSONL line nested deeper than real data ever is, before it is parsed: what
 * reads the value recurses once per level, and a file nested 200,000 deep overflowed the stack.
 * `firstLine` is the line of the file where `text` starts.
 */
export function refuseDeepNesting(path: string, text: string, firstLine = 1): void {
  const deep = tooDeep(text, DATASET_MAX_NESTING)
  if (deep !== null)
    throw new DatasetError(
      `dataset ${path}:${firstLine + deep.line - 1}: ${nestingMessage(DATASET_MAX_NESTING)}`,
    )
}

interface Issue {
  line: number
  message: string
}

/** All issues in one error: the user fixes the file in one round instead of one per run. */
function issuesError(
  path: string,
  issues: Issue[],
  where: (line: number) => string,
  noun: string,
): DatasetError {
  const listed = issues.slice(0, MAX_LISTED).map((i) => `dataset ${where(i.line)}: ${i.message}`)
  const more = issues.length - listed.length
  const lines = issues.map((i) => i.line)
  if (issues.length === 1) return new DatasetError(listed[0] as string, lines)
  const header = `dataset ${path}: ${issues.length} bad ${noun}s:`
  const trailer = more > 0 ? [`and ${more} more bad ${noun}${more === 1 ? '' : 's'}`] : []
  return new DatasetError([header, ...listed, ...trailer].join('\n'), lines)
}

/** V8's parse message on one line (its quoted excerpt of the input may span several), control bytes escaped. */
export function parseMessage(err: unknown): string {
  return printable((err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' '))
}

export function keysOf(record: Record<string, unknown>): string {
  const keys = Object.keys(record)
  if (keys.length === 0) return 'no keys'
  const shown = keys.slice(0, 8).join(', ')
  return `found keys: ${keys.length > 8 ? `${shown}, ...` : shown}`
}

// ---- JSONL ----

function loadJsonl(path: string, text: string, maxEntries: number): Dataset {
  const entries: DatasetEntry[] = []
  const rowImages = new DatasetImages(path)
  const issues: Issue[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length && entries.length < maxEntries; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    const line = i + 1
    if (tooDeep(raw, DATASET_MAX_NESTING) !== null) {
      issues.push({ line, message: nestingMessage(DATASET_MAX_NESTING) })
      continue
    }
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (err) {
      // A pretty-printed .json file lands here on line 1; say why it was read as JSONL.
      const hint =
        issues.length === 0 && entries.length === 0 && /\.json$/i.test(path)
          ? "; the file was read as JSONL because it does not start with '[' (a ShareGPT file is one JSON array)"
          : ''
      issues.push({ line, message: `not valid JSON (${parseMessage(err)})${hint}` })
      continue
    }
    const parsed = jsonlEntry(value)
    if (typeof parsed === 'string') issues.push({ line, message: parsed })
    else {
      const { imageRefs, ...entry } = parsed
      const images = imageRefs === undefined ? undefined : rowImages.resolve(imageRefs, line)
      if (typeof images === 'string') issues.push({ line, message: images.replace(/^line \d+: /, '') })
      else entries.push({ source_line: line, ...entry, ...(images === undefined ? {} : { images }) })
    }
  }
  if (issues.length > 0) throw issuesError(path, issues, (line) => `${path}:${line}`, 'line')
  // Not reached after the blank-file check in loadDataset; kept so callers can rely on entries.length > 0.
  if (entries.length === 0) throw new DatasetError(`dataset ${path}: no entries (only blank lines)`)
  return { path, format: 'jsonl', entries, skipped: 0 }
}

/** One JSONL record as an entry, or what is wrong with it (every problem, joined). */
function jsonlEntry(
  value: unknown,
): (Omit<DatasetEntry, 'source_line' | 'images'> & { imageRefs?: string[] }) | string {
  if (!isObject(value)) return `expected a JSON object with ${JSONL_SHAPE}, got ${describeValue(value)}`
  const problems: string[] = []
  let messages: ChatMessage[] | undefined
  const hasPrompt = value.prompt !== undefined
  const hasMessages = value.messages !== undefined
  if (hasPrompt && hasMessages) problems.push('has both "prompt" and "messages"; give one')
  else if (hasPrompt) {
    if (typeof value.prompt !== 'string')
      problems.push(`"prompt": expected a string, got ${describeValue(value.prompt)}`)
    else if (value.prompt.trim() === '') problems.push('"prompt" is empty')
    else messages = [{ role: 'user', content: value.prompt }]
  } else if (hasMessages) {
    const checked = chatMessages(value.messages)
    if (typeof checked === 'string') problems.push(checked)
    else messages = checked
  } else {
    const shareGpt =
      value.conversations !== undefined ? ' (a ShareGPT conversation belongs in one JSON array)' : ''
    problems.push(`expected ${JSONL_SHAPE}; ${keysOf(value)}${shareGpt}`)
  }
  const output = outputTokens(value)
  if (typeof output === 'string') problems.push(output)
  const images = value.images
  const imagesOk =
    images === undefined ||
    (Array.isArray(images) &&
      images.length > 0 &&
      images.every((x) => typeof x === 'string' && x.trim() !== ''))
  if (!imagesOk)
    problems.push(
      `"images": expected a non-empty list of file paths or http(s) URLs, got ${describeValue(images)}`,
    )
  if (problems.length > 0 || messages === undefined || typeof output === 'string') return problems.join('; ')
  return {
    messages,
    output_tokens: output,
    ...(images === undefined ? {} : { imageRefs: images as string[] }),
  }
}

function chatMessages(value: unknown): ChatMessage[] | string {
  if (!Array.isArray(value) || value.length === 0)
    return `"messages": expected a non-empty array of {role, content}, got ${describeValue(value)}`
  const messages: ChatMessage[] = []
  for (const [i, message] of value.entries()) {
    if (!isObject(message)) return `messages[${i}]: expected {role, content}, got ${describeValue(message)}`
    const { role, content } = message
    if (!ROLES.includes(role as ChatMessage['role']))
      return `messages[${i}].role: expected "system", "user" or "assistant", got ${describeValue(role)}`
    if (typeof content !== 'string')
      return `messages[${i}].content: expected a string, got ${describeValue(content)}`
    messages.push({ role: role as ChatMessage['role'], content })
  }
  const last = messages[messages.length - 1] as ChatMessage
  // The server's reply to the last message is what gets measured; a trailing assistant turn has none.
  if (last.role !== 'user') return `the last message must be from the user, got role "${last.role}"`
  if (last.content.trim() === '')
    return `messages[${messages.length - 1}].content (the user's prompt) is empty`
  return messages
}

/** output_tokens or max_tokens (synonyms; both may be given if equal); null (as pandas writes) = absent. */
function outputTokens(record: Record<string, unknown>): number | null | string {
  const given: [string, number][] = []
  const problems: string[] = []
  for (const key of ['output_tokens', 'max_tokens']) {
    const value = record[key]
    if (value === undefined || value === null) continue
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) given.push([key, value])
    else problems.push(`"${key}": expected a positive integer, got ${describeValue(value)}`)
  }
  if (problems.length > 0) return problems.join('; ')
  const [first, second] = given
  if (first && second && first[1] !== second[1])
    return `"output_tokens" (${first[1]}) and "max_tokens" (${second[1]}) disagree; give one`
  return first ? first[1] : null
}

// ---- ShareGPT JSON ----

type Speaker = ChatMessage['role']

/**
 * ShareGPT dumps name speakers in several ways; all map onto the three chat roles. A Map, not an
 * object literal, so a speaker named "constructor" is not found on the prototype.
 */
const SPEAKERS = new Map<string, Speaker>([
  ['system', 'system'],
  ['human', 'user'],
  ['user', 'user'],
  ['gpt', 'assistant'],
  ['assistant', 'assistant'],
  ['chatgpt', 'assistant'],
  ['bard', 'assistant'],
  ['bing', 'assistant'],
  ['model', 'assistant'],
])

const SHAREGPT_SHAPE = '"conversations" (array of {from, value}) or "messages" (array of {role, content})'

function loadShareGpt(
  path: string,
  text: string,
  count: (text: string) => number,
  maxEntries: number,
): Dataset {
  refuseDeepNesting(path, text)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    const message = parseMessage(err)
    const position = /at position (\d+)/.exec(message)
    const where = position ? `${path}:${lineAt(text, Number(position[1]))}` : path
    throw new DatasetError(
      `dataset ${where}: not valid JSON (${message}); a file starting with '[' is read as one ShareGPT JSON array`,
    )
  }
  if (!Array.isArray(value)) throw new DatasetError(`dataset ${path}: expected a JSON array of conversations`)
  if (value.length === 0) throw new DatasetError(`dataset ${path}: no conversations (the array is empty)`)

  const entries: DatasetEntry[] = []
  const issues: Issue[] = []
  // Dumps hold many conversations we cannot use; they are skipped, and the reasons are only shown
  // if nothing at all is usable (then the likely cause is a misnamed field, not dirty data).
  const skipReasons = new Map<string, number>()
  for (let i = 0; i < value.length && entries.length < maxEntries; i++) {
    const item: unknown = value[i]
    // A wrong item shape means a different format, not dirty data: that is an error.
    const turns = itemTurns(item)
    if (typeof turns === 'string') {
      issues.push({ line: i + 1, message: turns })
      continue
    }
    const entry = shareGptEntry(turns, count)
    if (typeof entry === 'string') skipReasons.set(entry, (skipReasons.get(entry) ?? 0) + 1)
    else entries.push({ source_line: i + 1, ...entry })
  }
  if (issues.length > 0) throw issuesError(path, issues, (n) => `${path}: conversation ${n}`, 'conversation')
  const skipped = [...skipReasons.values()].reduce((a, b) => a + b, 0)
  if (entries.length === 0) {
    const reasons = [...skipReasons].map(([reason, n]) => `${n} ${reason}`).join(', ')
    throw new DatasetError(`dataset ${path}: no usable conversations; all ${skipped} skipped (${reasons})`)
  }
  return { path, format: 'sharegpt', entries, skipped }
}

/** The turns of one conversation, or what is wrong with the item's shape. */
function itemTurns(item: unknown): unknown[] | string {
  if (!isObject(item)) return `expected an object with ${SHAREGPT_SHAPE}; got ${describeValue(item)}`
  const key =
    item.conversations !== undefined ? 'conversations' : item.messages !== undefined ? 'messages' : null
  if (key === null) return `expected ${SHAREGPT_SHAPE}; ${keysOf(item)}`
  const turns = item[key]
  if (!Array.isArray(turns)) return `"${key}": expected an array of turns, got ${describeValue(turns)}`
  return turns
}

/** 1-based line of a character offset, to point at a JSON syntax error in a big file. */
function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/**
 * The prompt is the first human turn (after any system turns before it), the reference reply the
 * turn right after it. Returns the reason to skip when the conversation has no such pair.
 */
function shareGptEntry(
  turns: unknown[],
  count: (text: string) => number,
): Omit<DatasetEntry, 'source_line'> | string {
  const system: ChatMessage[] = []
  for (let i = 0; i < turns.length; i++) {
    const turn = readTurn(turns[i])
    if (typeof turn === 'string') return turn
    // A greeting from the model before the first human turn is not part of the request.
    if (turn.role === 'assistant') continue
    if (turn.role === 'system') {
      system.push(turn)
      continue
    }
    if (turn.content.trim() === '') return 'with an empty first human turn'
    const reply = i + 1 < turns.length ? readTurn(turns[i + 1]) : 'with no reply'
    if (typeof reply === 'string') return reply
    if (reply.role !== 'assistant' || reply.content.trim() === '') return 'with no reply'
    const tokens = count(reply.content)
    return tokens > 0 ? { messages: [...system, turn], output_tokens: tokens } : 'with no reply'
  }
  return 'with no human turn'
}

/** {from, value} or {role, content}; a malformed or unknown turn is a reason to skip, as dirty data. */
export function readTurn(turn: unknown): ChatMessage | string {
  if (!isObject(turn)) return 'with a malformed turn'
  const speaker = turn.from ?? turn.role
  const content = turn.value ?? turn.content
  if (typeof speaker !== 'string' || typeof content !== 'string') return 'with a malformed turn'
  const role = SPEAKERS.get(speaker.toLowerCase())
  return role ? { role, content } : 'with an unknown speaker'
}
