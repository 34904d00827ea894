import { writeFileSync } from 'node:fs'
import { compareRuns, DEFAULT_MAX_REGRESSION } from '../../compare/compare.js'
import { writeCompareHtml } from '../../report/compare-page.js'
import { renderComparison } from '../../report/compare-render.js'
import { type LoadedRun, loadRun } from '../../result/load-run.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

const DEFAULT_GATES = Object.entries(DEFAULT_MAX_REGRESSION)
  .map(([key, value]) => `${key}=${key === 'success_rate' ? `${value * 100}pts` : `${value * 100}%`}`)
  .join(',')

export const COMPARE_SPEC: CommandSpec = {
  name: 'compare',
  summary:
    'Compare two runs level by level from their raw records: differences, significance (Mann-Whitney, seeded bootstrap) and a regression verdict (exit 1).',
  usage:
    'llmbench compare BASE NEW [--max-regression ttft_p95=10%,throughput=5%] [--markdown FILE] [--html FILE]',
  flags: [
    {
      name: 'max-regression',
      type: 'string',
      value: 'KEY=N%,...',
      help: 'allowed worsening per metric (ttft_p95, tpot_p99, itl_p50, e2e_p95, throughput, success_rate in pts)',
      default: DEFAULT_GATES,
    },
    {
      name: 'allow-mismatch',
      type: 'boolean',
      help: 'compare even when model, lengths, levels, stop rule or warm-up differ',
    },
    {
      name: 'markdown',
      type: 'string',
      value: 'FILE',
      help: 'also write the comparison as Markdown (CI job summary)',
    },
    {
      name: 'html',
      type: 'string',
      value: 'FILE',
      help: "also write the comparison as a self-contained HTML page: both runs' capacity, knees and patterns, shared charts, the table",
    },
    {
      name: 'strict-client',
      type: 'boolean',
      help: "also fail on levels where either run's client was client-bound or noisy (inconclusive)",
    },
    { name: 'all', type: 'boolean', help: 'show every metric, not only the gated ones' },
    { name: 'json', type: 'boolean', help: 'print the comparison as JSON' },
  ],
}

/** "ttft_p95=10%,success_rate=1pts" → { ttft_p95: 0.1, success_rate: 0.01 }; replaces the defaults. */
export function parseGates(text: string): Record<string, number> {
  const gates: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const match = /^\s*([a-z_0-9]+)\s*=\s*(\d+(?:\.\d+)?)\s*(%|pts)?\s*$/.exec(pair)
    const key = match?.[1]
    if (
      match === null ||
      key === undefined ||
      !/^((ttft|tpot|itl|e2e)_p\d+(\.\d+)?|throughput|success_rate)$/.test(key)
    ) {
      throw new CliError(
        `--max-regression: expected KEY=N% pairs (keys like ttft_p95, e2e_p99, throughput, success_rate), got ${JSON.stringify(pair)}`,
        EXIT.usage,
      )
    }
    gates[key] = Number(match[2]) / 100
  }
  return gates
}

function load(path: string): LoadedRun & { records: NonNullable<LoadedRun['records']> } {
  let run: LoadedRun
  try {
    run = loadRun(path)
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT.usage)
  }
  if (run.records === null)
    throw new CliError(`${run.dir}: no requests.jsonl; compare needs the raw records`, EXIT.usage)
  return run as LoadedRun & { records: NonNullable<LoadedRun['records']> }
}

export async function compareCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(COMPARE_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(COMPARE_SPEC))
    return EXIT.ok
  }
  if (positionals.length !== 2)
    throw new CliError('llmbench compare: give two result folders: BASE NEW', EXIT.usage)
  const gatesText = stringFlag(flags, 'max-regression')
  const gates = gatesText === undefined ? DEFAULT_MAX_REGRESSION : parseGates(gatesText)
  const base = load(positionals[0] as string)
  const next = load(positionals[1] as string)
  const comparison = compareRuns(
    { meta: base.result.meta, records: base.records, levels: base.result.levels },
    { meta: next.result.meta, records: next.records, levels: next.result.levels },
    gates,
    { strictClient: flags['strict-client'] === true },
  )
  if (comparison.mismatches.length > 0 && flags['allow-mismatch'] !== true) {
    io.err(
      `llmbench compare: the runs differ in set-up, so their figures are not comparable:\n${comparison.mismatches.map((m) => `  ${m}`).join('\n')}\n` +
        'Re-run with the same settings, or pass --allow-mismatch to compare anyway.\n',
    )
    return EXIT.usage
  }
  const markdown = renderComparison(comparison, flags.all === true)
  const markdownFile = stringFlag(flags, 'markdown')
  if (markdownFile !== undefined) writeFileSync(markdownFile, markdown)
  const htmlFile = stringFlag(flags, 'html')
  if (htmlFile !== undefined) {
    await writeCompareHtml(htmlFile, base, next, comparison, flags.all === true)
    io.err(`compare: wrote ${htmlFile}\n`)
  }
  io.out(flags.json === true ? `${JSON.stringify(comparison, null, 2)}\n` : markdown)
  return comparison.regressions.length > 0 ? EXIT.gateFailed : EXIT.ok
}
