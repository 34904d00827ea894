import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import { readHistory, renderHistory } from '../../report/history.js'
import { writeHistoryHtml } from '../../report/history-page.js'
import { writeReports } from '../../report/render-folder.js'
import { renderTable, renderVerdict } from '../../report/terminal.js'
import { buildResult } from '../../result/build-result.js'
import {
  CHARTS_DIR,
  HTML_FILE,
  LEVELS_CSV_FILE,
  RECORDS_FILE,
  REQUESTS_CSV_FILE,
  REQUESTS_PARQUET_FILE,
  SERVER_METRICS_FILE,
  SUMMARY_FILE,
} from '../../result/folder-layout.js'
import { badLinesNote, loadRun } from '../../result/load-run.js'
import { writeJsonAtomic } from '../../result/write-json.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { tableWidth, WIDE_FLAG } from '../table-width.js'

export const REPORT_SPEC: CommandSpec = {
  name: 'report',
  summary:
    "Rewrite bench_result.json, summary.md, charts/, report.html, levels.csv and requests.csv from a result folder's raw records, by the same functions as run; or show a history folder's trend.",
  // The summary is one line of the command list; what `report DIR` rewrites, and from what, is said here.
  usage:
    'llmbench report DIR|FILE   |   llmbench report --history DIR\n\n' +
    "From DIR/requests.jsonl and the run's meta, every figure is recomputed by the same functions as `run`, and\n" +
    'these files in DIR are rewritten: bench_result.json (schema llmbench.result/2; a /1 result is upgraded),\n' +
    'summary.md, charts/*.svg and charts/*.png, report.html, levels.csv and requests.csv (and requests.parquet\n' +
    'with --parquet or when DIR has one); then the table and the verdict are printed. The reports gain the\n' +
    '"What if" knees of other workloads, which a run leaves to this command (a replay of the model each).\n' +
    'Use it after a crash or Ctrl-C (a torn last line is skipped and said), or after upgrading llmbench.\n' +
    'A folder without requests.jsonl has its saved bench_result.json shown as it is; the charts, summary.md\n' +
    'and report.html are still drawn from it.',
  flags: [
    {
      name: 'history',
      type: 'string',
      value: 'DIR',
      help: 'show the trend of the runs appended to DIR/history.jsonl, and write it with charts to DIR/history.html',
    },
    { name: 'json', type: 'boolean', help: 'print bench_result.json to stdout instead of the table' },
    {
      name: 'parquet',
      type: 'boolean',
      help: 'also write requests.parquet (kept up to date without it when the folder already has one)',
    },
    {
      name: 'no-charts',
      type: 'boolean',
      help: 'rewrite the figures, summary.md and the exports only; leave charts/ and report.html as they are',
    },
    WIDE_FLAG,
  ],
}

export async function reportCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(REPORT_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(REPORT_SPEC))
    return EXIT.ok
  }
  const history = stringFlag(flags, 'history')
  if (history !== undefined) {
    let entries: ReturnType<typeof readHistory>
    try {
      entries = readHistory(history)
    } catch (error) {
      throw new CliError(error instanceof Error ? error.message : String(error), EXIT.usage)
    }
    io.out(renderHistory(entries))
    io.err(`history: wrote ${await writeHistoryHtml(history, entries)}\n`)
    return EXIT.ok
  }
  if (positionals.length !== 1)
    throw new CliError('llmbench report: give one result folder (or its bench_result.json)', EXIT.usage)
  let run: ReturnType<typeof loadRun>
  try {
    // A bad line is left out and said, not fatal: the good lines' figures are still worth showing.
    run = loadRun(positionals[0] as string, 'skip')
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT.usage)
  }
  // An empty requests.jsonl (emptied by hand, or a copy cut short) holds nothing to rebuild from:
  // rebuilding would overwrite the saved result with a run of zero requests called healthy.
  if (run.records !== null && run.records.length === 0 && (run.badLines?.records ?? null) === null)
    throw new CliError(
      `llmbench report: ${join(run.dir, RECORDS_FILE)} holds no records: nothing to rebuild from; ` +
        `${basename(run.resultFile)} is kept as it was (to see it, move the empty file aside)`,
      EXIT.usage,
    )
  // With records, every figure is recomputed by the same pure functions as `run`; without, the
  // saved summary is shown as it is.
  const result =
    run.records === null ? run.result : buildResult(run.records, run.result.meta, run.serverScrapes)
  if (run.records === null)
    io.err(`note: ${run.dir} has no requests.jsonl: showing the saved summary as it is\n`)
  if ((run.otherRunRecords ?? 0) > 0)
    io.err(
      `note: requests.jsonl also holds ${run.otherRunRecords} record(s) of another run: left out; ` +
        `showing run ${run.result.meta.run_id} only\n`,
    )
  if (run.tornLastLine)
    io.err('note: the last line of requests.jsonl was cut short (a crash?) and was skipped\n')
  const recordsLeftOut = run.badLines?.records ?? null
  for (const [file, bad] of [
    [RECORDS_FILE, recordsLeftOut],
    [SERVER_METRICS_FILE, run.badLines?.scrapes ?? null],
  ] as const)
    if (bad !== null) io.err(`warning: ${badLinesNote(join(run.dir, file), bad)}\n`)
  // The saved summary was made from every line: figures of fewer lines do not replace it.
  const rewriteSummary = run.records !== null && recordsLeftOut === null
  if (recordsLeftOut !== null)
    io.err(
      `note: ${basename(run.resultFile)} is left as it was (made from every line); the other files show the good lines\n`,
    )
  if (rewriteSummary) writeJsonAtomic(run.resultFile, result)
  const parquet = flags.parquet === true || existsSync(join(run.dir, REQUESTS_PARQUET_FILE))
  const reportNote = await writeReports(run.dir, result, {
    parquet,
    records: run.records,
    ...(flags['no-charts'] === true ? { draw: 'not asked' as const } : {}),
  })
  if (reportNote !== null) io.err(`note: ${reportNote}\n`)
  io.out(
    flags.json === true
      ? `${JSON.stringify(result, null, 2)}\n`
      : `${renderTable(result, { width: tableWidth(flags) })}\n${renderVerdict(result)}\n`,
  )
  // What `report` rewrote, on stderr so `--json` stays a clean document.
  const wrote = [
    ...(rewriteSummary ? [basename(run.resultFile)] : []),
    SUMMARY_FILE,
    LEVELS_CSV_FILE,
    ...(run.records !== null ? [REQUESTS_CSV_FILE] : []),
    ...(parquet && run.records !== null ? [REQUESTS_PARQUET_FILE] : []),
    ...(reportNote === null ? [CHARTS_DIR, HTML_FILE] : []),
  ]
  io.err(
    `${reportNote === null ? `Report: ${join(run.dir, HTML_FILE)}\n` : ''}Wrote in ${run.dir}: ${wrote.join(', ')}\n`,
  )
  return EXIT.ok
}
