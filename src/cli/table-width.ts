import type { FlagSpec, ParsedFlags } from './args.js'

/**
 * How wide the end-of-run table may be. `--wide`: every column. A terminal: its width. A pipe or a
 * file: $COLUMNS when set (a CI log that knows its width), else 100 — a table that reads in a
 * 100-column terminal or a `less` of the log; `--wide` (or `--json`) is there for the rest.
 */
export const PIPE_TABLE_WIDTH = 100

export function tableWidth(
  flags: ParsedFlags,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  if (flags.wide === true) return undefined
  if (stdout.isTTY === true && stdout.columns !== undefined && stdout.columns > 0) return stdout.columns
  const fromEnv = Number(env.COLUMNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : PIPE_TABLE_WIDTH
}

export const WIDE_FLAG: FlagSpec = {
  name: 'wide',
  type: 'boolean',
  help: 'show every column of the table (default: the columns that fit the terminal, 100 in a pipe)',
}
