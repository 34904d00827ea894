/** One problem found while loading the configuration. */
export interface ConfigIssue {
  /** The config file path as the user gave it, or "flags" (CLI flags), or "defaults" (the merged result). */
  file: string
  /** Key path like "bench.concurrency_levels[2]" (flags: "--levels[2]"); "" when the whole file is at fault. */
  path: string
  /** What was expected and what was found: "expected a positive integer, got -1". */
  message: string
}

/** One line per issue: `FILE: KEY.PATH: expected ..., got ...` (the path part is left out when empty). */
export function formatIssue(issue: ConfigIssue): string {
  return issue.path ? `${issue.file}: ${issue.path}: ${issue.message}` : `${issue.file}: ${issue.message}`
}

/**
 * Every configuration problem at once, so the user fixes them in one round instead of one per run.
 * `exitCode` is "usage or configuration error" (docs/exit-codes.md).
 */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[]
  readonly exitCode = 2

  constructor(issues: ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'))
    this.name = 'ConfigError'
    this.issues = issues
  }
}
