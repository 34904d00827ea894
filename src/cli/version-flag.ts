import { TOOL_VERSION } from '../version.js'

/**
 * `llmbench --version` and `-V` (capital, as in commander and git: `-v` reads as "verbose" to many).
 * Only as the first argument, where no command's flags can be meant.
 */
export function isVersionFlag(arg: string): boolean {
  return arg === '--version' || arg === '-V'
}

/** The version alone on its line, as `npm -v` and `node -v` print it, so scripts can compare it. */
export function versionLine(): string {
  return `${TOOL_VERSION}\n`
}
