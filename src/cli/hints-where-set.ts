import { configWhereSet } from '../config/load.js'
import type { RunConfig } from '../config/types.js'
import { nameWhereSet } from '../config/where-set.js'
import type { BenchResult } from '../result/bench-result.js'

/** Rewrites a hint to name where each setting it mentions was given (see where-set.ts). */
export type NameHint = (hint: string) => string

/** The hints of a run loaded from `config`: a setting from a file is named by its key in that file. */
export function hintsFor(config: RunConfig): NameHint {
  const where = configWhereSet(config)
  return (hint) => nameWhereSet(hint, where)
}

/**
 * The result as the terminal shows it: each level's hints and advice name the keys in the files the
 * values came from. Only our own words change: the servers' messages are kept as they came. The
 * stored result keeps the flags (`report` reads it without the files).
 */
export function withHintsNamed(result: BenchResult, name: NameHint): BenchResult {
  return {
    ...result,
    levels: result.levels.map((level) => ({
      ...level,
      advice: name(level.advice),
      ...(level.non_load_failures == null
        ? {}
        : { non_load_failures: { ...level.non_load_failures, hint: name(level.non_load_failures.hint) } }),
      ...(level.misconfiguration == null
        ? {}
        : { misconfiguration: { ...level.misconfiguration, hint: name(level.misconfiguration.hint) } }),
    })),
  }
}

/** A preflight's summary (first line what happened, the server's words; then the hint) with its hint named. */
export function preflightSummaryNamed(summary: string, name: NameHint): string {
  const cut = summary.indexOf('\n')
  return cut < 0 ? summary : summary.slice(0, cut) + name(summary.slice(cut))
}
