import { type ParseArgsConfig, parseArgs } from 'node:util'
import { closestName } from '../closest-name.js'
import { CliError, EXIT } from './exit-codes.js'

/** One command-line flag: how to parse it and how --help describes it. */
export interface FlagSpec {
  name: string
  short?: string
  type: 'string' | 'boolean'
  multiple?: boolean
  /** Placeholder shown in help, e.g. "FILE" or "1,4,8". */
  value?: string
  help: string
  /** The default as the user should read it in --help. */
  default?: string
}

export interface CommandSpec {
  name: string
  summary: string
  usage: string
  flags: FlagSpec[]
}

export type ParsedFlags = Record<string, string | boolean | string[] | undefined>

export const HELP_FLAG: FlagSpec = { name: 'help', short: 'h', type: 'boolean', help: 'show this help' }

/**
 * Parses argv strictly: an unknown flag, a missing value or a stray positional argument is a usage
 * error (exit 2), never silently ignored.
 */
export function parseFlags(
  spec: CommandSpec,
  argv: string[],
  allowPositionals = false,
): {
  flags: ParsedFlags
  positionals: string[]
} {
  const options: NonNullable<ParseArgsConfig['options']> = {}
  for (const flag of [...spec.flags, HELP_FLAG]) {
    options[flag.name] = {
      type: flag.type,
      ...(flag.short !== undefined ? { short: flag.short } : {}),
      ...(flag.multiple === true ? { multiple: true } : {}),
    }
  }
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals, strict: true })
    return { flags: values as ParsedFlags, positionals }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new CliError(
      `llmbench ${spec.name}: ${withFlagGuess(message, spec)}\nRun 'llmbench ${spec.name} --help' for the flags.`,
      EXIT.usage,
    )
  }
}

/**
 * "Unknown option '--level'" gains " (did you mean --levels?)": the command's nearest flag, if any,
 * right after the name (Node may add a sentence about positionals after it).
 */
function withFlagGuess(message: string, spec: CommandSpec): string {
  return message.replace(/^Unknown option '--([^'=]+)'/, (unknown, name: string) => {
    const guess = closestName(
      name,
      [...spec.flags, HELP_FLAG].map((flag) => flag.name),
    )
    return guess === undefined ? unknown : `${unknown} (did you mean --${guess}?)`
  })
}

/** Where the flag's text starts: two spaces, the names column, one space. */
const NAMES_WIDTH = 34
const TEXT_COLUMN = 2 + NAMES_WIDTH + 1
/** Below this the text column would be a few words wide: wrap as if the terminal were this wide. */
const NARROWEST = 72

/** The terminal's width, else $COLUMNS (a pipe has none), else 100. */
export function helpWidth(
  stream: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number {
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns > 0) return stream.columns
  const columns = Number(env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : 100
}

/**
 * The help, wrapped to `width`: each flag's text in one column beside its names, continued under
 * it; names too wide for their column put the text on the next line instead of pushing it out.
 */
export function renderHelp(spec: CommandSpec, width: number = helpWidth()): string {
  const textWidth = Math.max(width, NARROWEST) - TEXT_COLUMN
  const indent = ' '.repeat(TEXT_COLUMN)
  const rows = [...spec.flags, HELP_FLAG].map((flag) => {
    const names = `  ${flag.short !== undefined ? `-${flag.short}, ` : '    '}--${flag.name}${flag.value !== undefined ? ` ${flag.value}` : ''}`
    const help = flag.default !== undefined ? `${flag.help} (default: ${flag.default})` : flag.help
    const lines = wrapWords(help, textWidth)
    const head = names.length < TEXT_COLUMN ? `${names.padEnd(TEXT_COLUMN)}${lines.shift() ?? ''}` : names
    return [head.trimEnd(), ...lines.map((line) => indent + line)].join('\n')
  })
  const summary = wrapWords(spec.summary, Math.max(width, NARROWEST)).join('\n')
  const usage = wrapKeepingIndent(`Usage: ${spec.usage}`, Math.max(width, NARROWEST))
  return `${summary}\n\n${usage}\n\nFlags:\n${rows.join('\n')}\n`
}

/** Each line of a written text wrapped to `width`, its continuation indented like the line itself. */
function wrapKeepingIndent(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.length <= width) return line
      const indent = /^\s*/.exec(line)?.[0] ?? ''
      return wrapWords(line, width - indent.length)
        .map((part) => indent + part)
        .join('\n')
    })
    .join('\n')
}

/** Words into lines of at most `width` characters (a longer word has a line of its own). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter((part) => part !== '')) {
    for (const [i, piece] of splitAtCommas(word, width).entries()) {
      // The pieces of one comma list join without a space: `a=1,b=2` stays one list when read.
      const gap = i === 0 ? ' ' : ''
      if (line !== '' && line.length + gap.length + piece.length > width) {
        lines.push(line)
        line = piece
      } else line = line === '' ? piece : `${line}${gap}${piece}`
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

/** A word longer than the line cut after its commas (a default such as `ttft_p50=10%,...`); else whole. */
function splitAtCommas(word: string, width: number): string[] {
  if (word.length <= width || !word.includes(',')) return [word]
  return word.split(/(?<=,)/)
}

/**
 * "1,4,8" → [1, 4, 8]; a part that is not a number stays the text the user wrote ("1,x" → [1, "x"]),
 * so validation names its place and echoes it, where NaN would have said "got NaN".
 */
export function numberList(text: string): (number | string)[] {
  return text.split(',').map((part) => {
    const trimmed = part.trim()
    const value = Number(trimmed)
    return trimmed === '' || Number.isNaN(value) ? trimmed : value
  })
}

export function stringFlag(flags: ParsedFlags, name: string): string | undefined {
  const value = flags[name]
  return typeof value === 'string' ? value : undefined
}

/** Number flags are converted here and validated by the config schema, which names the flag. */
export function numberFlag(flags: ParsedFlags, name: string): number | undefined {
  const value = stringFlag(flags, name)
  return value === undefined ? undefined : value.trim() === '' ? Number.NaN : Number(value)
}
