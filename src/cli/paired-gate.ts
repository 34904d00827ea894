import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_MAX_REGRESSION } from '../compare/compare.js'
import { judgePairedRun } from '../compare/paired-judgement.js'
import { renderComparison } from '../report/compare-render.js'
import { pairRatioLines } from '../report/pair-ratios.js'
import { loadRun } from '../result/load-run.js'
import { outcomeExit } from './commands/compare.js'
import { CliError, EXIT } from './exit-codes.js'
import type { Io } from './io.js'

/**
 * `run --paired --gate`: the folder just written, judged as `compare DIR` judges it (default
 * thresholds), the comparison written to gate.json and gate.md, and compare's exit code.
 */
export function pairedGate(outDir: string, io: Io): number {
  const run = loadRun(outDir)
  const judged =
    run.records === null ? null : judgePairedRun({ ...run, records: run.records }, DEFAULT_MAX_REGRESSION)
  if (judged === null) throw new CliError(`${outDir}: no paired records to judge`, EXIT.usage)
  const markdown = renderComparison(judged.comparison)
  writeFileSync(join(outDir, 'gate.json'), `${JSON.stringify(judged.comparison, null, 2)}\n`)
  writeFileSync(join(outDir, 'gate.md'), markdown)
  io.err(`gate: A = ${judged.names[0]}, B = ${judged.names[1]}\n${markdown}`)
  io.err(
    pairRatioLines(judged.comparison)
      .map((line) => `gate: ${line}\n`)
      .join(''),
  )
  io.err(`gate: ${judged.comparison.outcome}; written to ${join(outDir, 'gate.json')}\n`)
  return outcomeExit(judged.comparison)
}
