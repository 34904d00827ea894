import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_MAX_REGRESSION } from '../compare/compare.js'
import { judgePairedRun } from '../compare/paired-judgement.js'
import type { RunConfig } from '../config/types.js'
import { renderComparison } from '../report/compare-render.js'
import { pairRatioLines } from '../report/pair-ratios.js'
import { GATE_JSON_FILE, GATE_MD_FILE } from '../result/folder-layout.js'
import { loadRun } from '../result/load-run.js'
import { outcomeExit, parseFloors, parseGates } from './commands/compare.js'
import { CliError, EXIT } from './exit-codes.js'
import type { Io } from './io.js'

/**
 * `run --paired --gate`: the folder just written, judged as `compare DIR` judges it (its
 * --max-regression and --min-change if the run was given them, else compare's defaults), the
 * comparison written to gate.json and gate.md, and compare's exit code.
 */
export function pairedGate(
  outDir: string,
  io: Io,
  thresholds: Pick<RunConfig['run'], 'gate_max_regression' | 'gate_min_change'>,
): number {
  const run = loadRun(outDir)
  // Checked when the config was loaded (config/schema.ts gateThresholds): they read here.
  const gates =
    thresholds.gate_max_regression === null
      ? DEFAULT_MAX_REGRESSION
      : parseGates(thresholds.gate_max_regression)
  const minChange = thresholds.gate_min_change === null ? {} : parseFloors(thresholds.gate_min_change)
  const judged =
    run.records === null ? null : judgePairedRun({ ...run, records: run.records }, gates, { minChange })
  if (judged === null) throw new CliError(`${outDir}: no paired records to judge`, EXIT.usage)
  writeFileSync(join(outDir, GATE_JSON_FILE), `${JSON.stringify(judged.comparison, null, 2)}\n`)
  writeFileSync(join(outDir, GATE_MD_FILE), renderComparison(judged.comparison))
  // The terminal gets the pairs as `gate:` lines of their own (below), not the Markdown's table too.
  io.err(
    `gate: A = ${judged.names[0]}, B = ${judged.names[1]}\n${renderComparison(judged.comparison, false, false)}`,
  )
  io.err(
    pairRatioLines(judged.comparison)
      .map((line) => `gate: ${line}\n`)
      .join(''),
  )
  io.err(`gate: ${judged.comparison.outcome}; written to ${join(outDir, GATE_JSON_FILE)}\n`)
  return outcomeExit(judged.comparison)
}
