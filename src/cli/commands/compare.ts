import { writeFileSync } from 'node:fs'
import {
  type Comparison,
  compareRuns,
  DEFAULT_MAX_REGRESSION,
  DEFAULT_MIN_CHANGE,
  type RunDrift,
  type RunRecords,
} from '../../compare/compare.js'
import { judgePairedRun } from '../../compare/paired-judgement.js'
import { readFloors, readGates } from '../../config/gate-thresholds.js'
import { writeCompareHtml } from '../../report/compare-page.js'
import { renderComparison } from '../../report/compare-render.js'
import { type LoadedRun, loadRun } from '../../result/load-run.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

/** Gates whose allowed worsening is in points of a share, not a relative change. */
const IN_POINTS = new Set(['success_rate', 'fluidity_p90', 'tail'])

const DEFAULT_GATES = Object.entries(DEFAULT_MAX_REGRESSION)
  .map(([key, value]) => `${key}=${IN_POINTS.has(key) ? `${value * 100}pts` : `${value * 100}%`}`)
  .join(',')
const DEFAULT_FLOORS = Object.entries(DEFAULT_MIN_CHANGE)
  .map(([key, value]) => `${key}=${value}${key === 'throughput' ? 'tok/s' : 'ms'}`)
  .join(',')

export const COMPARE_SPEC: CommandSpec = {
  name: 'compare',
  summary:
    'Compare two runs level by level from their raw records: differences with seeded block-bootstrap intervals, the knee, and a verdict (exit 1 regression, 5 inconclusive).',
  usage:
    'llmbench compare BASE NEW | compare PAIRED_DIR [--max-regression ttft_p95=10%,throughput=5%] [--min-change tpot=1ms] [--markdown FILE] [--html FILE]',
  flags: [
    {
      name: 'max-regression',
      type: 'string',
      value: 'KEY=N%,...',
      help: 'allowed worsening per metric (ttft_p95, tpot_p99, itl_p50, e2e_p95, throughput, success_rate and fluidity_p90 in pts, knee; tail in pts: the share of new requests beyond the base p90 over its expected 10%, gated where a tail percentile has too few requests); replaces the defaults',
      default: DEFAULT_GATES,
    },
    {
      name: 'min-change',
      type: 'string',
      value: 'KEY=N,...',
      help: 'absolute floor a regression must also exceed (ttft, tpot, itl, e2e or one percentile like ttft_p99 in ms; throughput in tok/s); merged with the defaults',
      default: DEFAULT_FLOORS,
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
      help: "also gate levels where either run's client was client-bound or noisy (otherwise inconclusive)",
    },
    { name: 'all', type: 'boolean', help: 'show every metric, not only the gated ones' },
    { name: 'json', type: 'boolean', help: 'print the comparison as JSON' },
  ],
}

/** "ttft_p95=10%,success_rate=1pts" → { ttft_p95: 0.1, success_rate: 0.01 }; replaces the defaults. */
export function parseGates(text: string): Record<string, number> {
  const gates = readGates(text)
  if (typeof gates === 'string') throw new CliError(`--max-regression: ${gates}`, EXIT.usage)
  return gates
}

/** "tpot=0.5ms,throughput=2tok/s" → { tpot: 0.5, throughput: 2 }; merged over the defaults. */
export function parseFloors(text: string): Record<string, number> {
  const floors = readFloors(text)
  if (typeof floors === 'string') throw new CliError(`--min-change: ${floors}`, EXIT.usage)
  return floors
}

/** The exit code of a comparison's outcome: CI fails on 1, and can retry (or let pass) on 5. */
export function outcomeExit(comparison: Comparison): number {
  if (comparison.outcome === 'regression') return EXIT.gateFailed
  return comparison.outcome === 'inconclusive' ? EXIT.inconclusive : EXIT.ok
}

/** The run's drift verdict, from results that carry one (written by versions that measure a control level). */
function driftOf(run: LoadedRun): RunDrift | null {
  const drift = (run.result as { drift?: RunDrift | null }).drift
  return drift === undefined ? null : drift
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
  if (positionals.length !== 1 && positionals.length !== 2)
    throw new CliError(
      'llmbench compare: give two result folders, BASE NEW, or one folder of a --paired run',
      EXIT.usage,
    )
  const gatesText = stringFlag(flags, 'max-regression')
  const gates = gatesText === undefined ? DEFAULT_MAX_REGRESSION : parseGates(gatesText)
  const floorsText = stringFlag(flags, 'min-change')
  const minChange = floorsText === undefined ? {} : parseFloors(floorsText)
  const base = load(positionals[0] as string)
  const next = positionals.length === 2 ? load(positionals[1] as string) : base
  const options = { strictClient: flags['strict-client'] === true, minChange }
  const paired = positionals.length === 1 ? judgePairedRun(base, gates, options) : null
  if (positionals.length === 1 && paired === null)
    throw new CliError(
      `${base.dir}: not a --paired run; compare one folder only when its run measured two targets in pairs (run --paired), else give BASE NEW`,
      EXIT.usage,
    )
  if (paired !== null) io.err(`compare: paired run: A = ${paired.names[0]}, B = ${paired.names[1]}\n`)
  const comparison = paired?.comparison ?? compareRuns(runRecords(base), runRecords(next), gates, options)
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
  return outcomeExit(comparison)
}

function runRecords(run: ReturnType<typeof load>): RunRecords {
  const { meta, levels, saturation, repeats } = run.result
  return {
    meta,
    records: run.records,
    levels,
    saturation,
    drift: driftOf(run),
    ...(repeats === undefined ? {} : { knees: repeats.knee_summary }),
  }
}
