import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeReports } from '../../report/render-folder.js'
import { appendStepSummary } from '../../report/step-summary.js'
import { renderTable, renderVerdict } from '../../report/terminal.js'
import { RECORDS_FILE, RESULT_FILE } from '../../result/folder-layout.js'
import { loadRun } from '../../result/load-run.js'
import { writeJsonAtomic } from '../../result/write-json.js'
import { mergeShards } from '../../run/shard/merge.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { tableWidth, WIDE_FLAG } from '../table-width.js'

export const MERGE_SPEC: CommandSpec = {
  name: 'merge',
  summary:
    'Merge the shard result folders of one run (llmbench run --shard I/N) into one result, exactly: records concatenated, every figure recomputed.',
  usage: 'llmbench merge SHARD_DIR... --out DIR',
  flags: [
    { name: 'out', type: 'string', value: 'DIR', help: 'the merged result folder (required)' },
    { name: 'json', type: 'boolean', help: 'print bench_result.json to stdout instead of the table' },
    WIDE_FLAG,
  ],
}

export async function mergeCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(MERGE_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(MERGE_SPEC))
    return EXIT.ok
  }
  const out = stringFlag(flags, 'out')
  if (out === undefined) throw new CliError('llmbench merge: --out DIR is required', EXIT.usage)
  if (positionals.length === 0)
    throw new CliError('llmbench merge: give the shard result folders', EXIT.usage)
  let merged: ReturnType<typeof mergeShards>
  try {
    const runs = positionals.map((path) => {
      const run = loadRun(path)
      if (run.tornLastLine)
        io.err(`note: ${run.dir}: the last line of requests.jsonl was cut short and was skipped\n`)
      return run
    })
    merged = mergeShards(runs)
  } catch (error) {
    // MergeError and loadRun's errors are both the user's to fix: which folder, what is wrong.
    if (error instanceof Error) throw new CliError(error.message, EXIT.usage)
    throw error
  }
  mkdirSync(out, { recursive: true })
  writeFileSync(
    join(out, RECORDS_FILE),
    merged.records.map((record) => `${JSON.stringify(record)}\n`).join(''),
  )
  writeJsonAtomic(join(out, RESULT_FILE), merged.result)
  await writeReports(out, merged.result)
  const stepSummary = appendStepSummary(out)
  if (stepSummary !== null) io.err(`summary.md appended to $GITHUB_STEP_SUMMARY (${stepSummary})\n`)
  const shards = merged.result.meta.merged?.shards ?? []
  io.err(
    `merged ${shards.length} shards (${merged.records.length} records) from ${shards.map((s) => s.host).join(', ')} -> ${out}\n`,
  )
  for (const warning of merged.warnings) io.err(`warning: ${warning}\n`)
  io.out(
    flags.json === true
      ? `${JSON.stringify(merged.result, null, 2)}\n`
      : `${renderTable(merged.result, { width: tableWidth(flags) })}\n${renderVerdict(merged.result)}\n`,
  )
  return EXIT.ok
}
