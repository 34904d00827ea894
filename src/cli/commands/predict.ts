import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { oldSloSpellingNote, parseSloKey, type Slo } from '../../metrics/slo.js'
import type { CapacityModel } from '../../model/capacity-model.js'
import { type ModelFile, readModelFile } from '../../model/model-file.js'
import { type Prediction, predict } from '../../model/predict.js'
import { renderPrediction } from '../../report/model-text.js'
import type { BenchResult } from '../../result/bench-result.js'
import { loadRun } from '../../result/load-run.js'
import { writeJsonAtomic } from '../../result/write-json.js'
import { type CommandSpec, numberList, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import { folderModel } from '../folder-model.js'
import type { Io } from '../io.js'
import { sloPairs } from '../setting-flags.js'

export const PREDICT_SPEC: CommandSpec = {
  name: 'predict',
  summary:
    "Predict another workload from the capacity model fitted on a result folder's run: figures per level, the knee, the SLO capacity and replicas, each with a 95% interval; --confirm measures it.",
  usage:
    'llmbench predict DIR [--input-tokens N] [--output-tokens N] [--levels 1,2,4] [--slo KEY=MS,...] [--rate N] [--confirm]\n' +
    'llmbench predict --model-file FILE [the same flags]\n\n' +
    'The model fitted on the run in DIR (see `llmbench model DIR`) is run in virtual time on the workload\n' +
    'given, at each level: throughput, requests/s, TTFT, TPOT and E2E, each at the fitted parameters and\n' +
    "between the model run at both ends of their intervals, widened by the model's error on the run it was\n" +
    'fitted on. Then the knee, the highest level meeting the SLOs, and with --rate how many replicas serve\n' +
    'that many requests/s. --confirm then runs the predicted workload against the same server at one or two\n' +
    'levels (the knee and the level below it, or --confirm-levels) and prints predicted against measured;\n' +
    'the confirmation run is a result folder of its own, with prediction.json holding both and the error.\n' +
    'With --model-file the model is the calibrated one `model --calibrate` wrote, its intervals 90% prediction\n' +
    'intervals calibrated on its own points; the levels default to 1, 2, the slots and twice the slots.',
  flags: [
    {
      name: 'model-file',
      type: 'string',
      value: 'FILE',
      help: 'predict from a calibrated model file (`model --calibrate`) instead of a result folder',
    },
    { name: 'input-tokens', type: 'string', value: 'N', help: 'prompt tokens', default: "the run's" },
    { name: 'output-tokens', type: 'string', value: 'N', help: 'output tokens', default: "the run's" },
    {
      name: 'levels',
      type: 'string',
      value: '1,2,4',
      help: 'levels (streams) to predict',
      default: "the run's",
    },
    {
      name: 'slo',
      type: 'string',
      value: 'KEY=MS,...',
      help: 'objectives, e.g. ttft_p95=800,tpot_p50=50 in ms (ttft, tpot, e2e)',
      default: "the run's",
    },
    {
      name: 'rate',
      type: 'string',
      value: 'N',
      help: 'requests per second to serve: how many replicas that takes',
    },
    {
      name: 'slots',
      type: 'string',
      value: 'N',
      help: 'what if the server ran N requests at once (its slots, max_num_seqs)',
      default: 'the fitted',
    },
    { name: 'confirm', type: 'boolean', help: 'run the predicted workload at one or two levels and compare' },
    {
      name: 'confirm-levels',
      type: 'string',
      value: 'A,B',
      help: 'the levels --confirm runs',
      default: 'the predicted knee and the level below it',
    },
    {
      name: 'requests',
      type: 'string',
      value: 'N',
      help: 'measured requests per confirmation level',
      default: '40',
    },
    {
      name: 'api-key-env',
      type: 'string',
      value: 'NAME',
      help: 'environment variable holding the API key (--confirm)',
    },
    {
      name: 'out',
      type: 'string',
      value: 'DIR',
      help: 'the confirmation result folder',
      default: 'DIR/confirm-IxO',
    },
    { name: 'json', type: 'boolean', help: 'print the prediction (and confirmation) as JSON' },
  ],
}

export async function predictCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(PREDICT_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(PREDICT_SPEC))
    return EXIT.ok
  }
  const source = predictionSource(flags, positionals)
  const model = withSlots(source.model, countFlag(flags, 'slots'))
  const dir = source.dir
  const request = {
    input_tokens: countFlag(flags, 'input-tokens') ?? Math.round(model.fitted_on.input_tokens),
    output_tokens: countFlag(flags, 'output-tokens') ?? Math.round(model.fitted_on.output_tokens),
    levels: levelsFlag(flags, 'levels') ?? source.levels(model),
    slos: slosFlag(flags, io) ?? source.slos,
    rate: rateFlag(flags),
  }
  const prediction = predict(model, request)
  if (flags.confirm !== true) {
    io.out(flags.json === true ? `${JSON.stringify(prediction, null, 2)}\n` : renderPrediction(prediction))
    return EXIT.ok
  }
  const confirmLevels = levelsFlag(flags, 'confirm-levels') ?? defaultConfirmLevels(prediction)
  if (!flags.json) io.out(renderPrediction(prediction))
  const out =
    stringFlag(flags, 'out') ?? join(dir, `confirm-${request.input_tokens}x${request.output_tokens}`)
  io.err(
    `confirm: running ${request.input_tokens}-token prompts, ${request.output_tokens} output tokens at ${confirmLevels.join(',')} into ${out}\n`,
  )
  const target = source.target
  const runArgs = [
    '--base-url',
    target.base_url,
    '--model',
    target.model,
    '--endpoint',
    target.endpoint,
    ...(target.protocol === undefined ? [] : ['--protocol', target.protocol]),
    ...(stringFlag(flags, 'api-key-env') === undefined
      ? []
      : ['--api-key-env', stringFlag(flags, 'api-key-env') as string]),
    '--levels',
    confirmLevels.join(','),
    '--requests',
    String(countFlag(flags, 'requests') ?? 40),
    '--input-tokens',
    String(request.input_tokens),
    '--output-tokens',
    String(request.output_tokens),
    ...(target.ignore_eos ? ['--ignore-eos'] : []),
    '--out',
    out,
    '--quiet',
  ]
  const { runCommand } = await import('./run.js')
  // The run's own table is not this command's answer: its progress and errors still reach stderr.
  const code = await runCommand(runArgs, { out: () => {}, err: io.err })
  // An interrupted confirmation keeps what it measured: the levels that finished are confirmed, and
  // the file says the run was cut, so a prediction is never lost with the signal.
  const interrupted = code === EXIT.interrupted
  if (code !== EXIT.ok && code !== EXIT.gateFailed && !interrupted) return code
  const confirmed = confirmation(prediction, measuredResult(out, interrupted))
  const saved = { prediction, confirmation: confirmed, ...(interrupted ? { interrupted: true } : {}) }
  writeJsonAtomic(join(out, 'prediction.json'), saved)
  io.out(flags.json === true ? `${JSON.stringify(saved, null, 2)}\n` : renderConfirmation(confirmed))
  io.err(
    `Wrote ${join(out, 'prediction.json')} (predicted, measured and the error${interrupted ? '; interrupted: the levels that finished' : ''})\n`,
  )
  return interrupted ? code : EXIT.ok
}

/** What a prediction is made from: a result folder's fitted model, or a calibrated model file. */
interface PredictionSource {
  model: CapacityModel
  /** Where the confirmation folder goes by default. */
  dir: string
  levels: (model: CapacityModel) => number[]
  slos: Slo[]
  /** The server --confirm measures. */
  target: { base_url: string; model: string; endpoint: string; protocol?: string; ignore_eos: boolean }
}

function predictionSource(flags: Record<string, unknown>, positionals: readonly string[]): PredictionSource {
  const file = stringFlag(flags as never, 'model-file')
  if (file !== undefined) {
    if (positionals.length > 0)
      throw new CliError('llmbench predict: give a result folder or --model-file, not both', EXIT.usage)
    const { model, file: read } = modelFileAt(file)
    return {
      model,
      dir: dirname(file),
      // One stream, two, the slots and twice the slots: below, at and past the knee a run would find.
      levels: (m) => {
        const slots = Math.max(1, Math.round(m.parameters.slots.value))
        return [...new Set([1, 2, slots, 2 * slots])].sort((a, b) => a - b)
      },
      slos: [],
      target: {
        base_url: read.server.base_url,
        model: read.server.model,
        endpoint: '/v1/chat/completions',
        ignore_eos: true,
      },
    }
  }
  if (positionals.length !== 1)
    throw new CliError(
      'llmbench predict: give one result folder (or its bench_result.json), or --model-file FILE',
      EXIT.usage,
    )
  const dir = positionals[0] as string
  const { result, model } = folderModel('predict', dir)
  const meta = result.meta
  return {
    model,
    dir,
    levels: () => meta.load.levels,
    slos: slosOf(meta.slo ?? {}),
    target: {
      base_url: meta.target.base_url,
      model: meta.target.model,
      endpoint: meta.target.endpoint,
      ...(meta.target.protocol === undefined ? {} : { protocol: meta.target.protocol }),
      ignore_eos: meta.workload.ignore_eos === true,
    },
  }
}

/** A model file's calibrated model; a usage error naming the file and the key when it cannot be used. */
function modelFileAt(path: string): { model: CapacityModel; file: ModelFile } {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new CliError(
      `llmbench predict: --model-file ${path}: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.usage,
    )
  }
  const read = readModelFile(json)
  if ('problems' in read)
    throw new CliError(
      `llmbench predict: --model-file ${path}: its model cannot be used:\n  ${read.problems.join('\n  ')}`,
      EXIT.usage,
    )
  return read
}

/** The confirming run's result; an interrupted run that wrote none confirmed nothing. */
function measuredResult(out: string, interrupted: boolean): BenchResult | null {
  try {
    return loadRun(out, 'skip').result
  } catch (error) {
    if (interrupted) return null
    throw error
  }
}

/** The model with another slot count, said to be set, not measured: a what-if of the server's configuration. */
function withSlots(model: CapacityModel, slots: number | undefined): CapacityModel {
  if (slots === undefined) return model
  const basis = `set by --slots (fitted: ${model.parameters.slots.value}, ${model.parameters.slots.basis})`
  return {
    ...model,
    parameters: {
      ...model.parameters,
      slots: { value: slots, low: slots, high: slots, measured: false, basis },
    },
  }
}

/** One confirmed level: what the model said, what the server did, the error. */
export interface ConfirmedLevel {
  level: number
  predicted_tokens_per_s: { value: number; low: number; high: number }
  measured_tokens_per_s: number
  /** predicted / measured − 1. */
  error: number
  /** The measurement inside the prediction interval. */
  inside: boolean
  predicted_ttft_p50_ms: number | null
  measured_ttft_p50_ms: number | null
}

function confirmation(prediction: Prediction, measured: BenchResult | null): ConfirmedLevel[] {
  return (measured?.levels ?? []).flatMap((level) => {
    const predicted = prediction.levels.find((p) => p.level === level.value)
    const rate = level.steady_window !== null ? level.output_tokens_per_s_steady : level.output_tokens_per_s
    if (predicted === undefined || !(rate > 0)) return []
    const tput = predicted.output_tokens_per_s
    return [
      {
        level: level.value,
        predicted_tokens_per_s: tput,
        measured_tokens_per_s: Math.round(rate * 100) / 100,
        error: Math.round((tput.value / rate - 1) * 10000) / 10000,
        inside: rate >= tput.low && rate <= tput.high,
        predicted_ttft_p50_ms: predicted.ttft_ms.p50?.value ?? null,
        measured_ttft_p50_ms: level.ttft_ms.p50 ?? null,
      },
    ]
  })
}

function renderConfirmation(levels: readonly ConfirmedLevel[]): string {
  const lines = ['Confirmed (output tokens/s; TTFT p50 ms):']
  for (const level of levels)
    lines.push(
      `  ${String(level.level).padStart(4)}  predicted ${level.predicted_tokens_per_s.value.toFixed(1)} ` +
        `(${level.predicted_tokens_per_s.low.toFixed(1)}–${level.predicted_tokens_per_s.high.toFixed(1)}), measured ` +
        `${level.measured_tokens_per_s.toFixed(1)}: error ${(level.error * 100).toFixed(1)}%` +
        `${level.inside ? ', inside the interval' : ', OUTSIDE the interval'}; TTFT ${level.predicted_ttft_p50_ms ?? '?'} against ${level.measured_ttft_p50_ms ?? '?'}`,
    )
  return `${lines.join('\n')}\n`
}

/** The predicted knee and the level below it; without a knee, the two highest levels. */
function defaultConfirmLevels(prediction: Prediction): number[] {
  const levels = prediction.levels.map((level) => level.level)
  const knee = prediction.knee.value
  const at = knee === null ? levels.length - 1 : levels.indexOf(knee)
  return levels.slice(Math.max(0, at - 1), at + 1)
}

function countFlag(flags: Record<string, unknown>, name: string): number | undefined {
  const text = stringFlag(flags as never, name)
  if (text === undefined) return undefined
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1)
    throw new CliError(
      `llmbench predict: --${name} must be an integer >= 1, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  return value
}

function levelsFlag(flags: Record<string, unknown>, name: string): number[] | undefined {
  const text = stringFlag(flags as never, name)
  if (text === undefined) return undefined
  const levels = numberList(text)
  const bad = levels.find((level) => typeof level !== 'number' || !Number.isInteger(level) || level < 1)
  if (bad !== undefined || levels.length === 0)
    throw new CliError(
      `llmbench predict: --${name} must be a list of integers >= 1 like 1,2,4, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  return [...new Set(levels as number[])].sort((a, b) => a - b)
}

function rateFlag(flags: Record<string, unknown>): number | null {
  const text = stringFlag(flags as never, 'rate')
  if (text === undefined) return null
  const value = Number(text)
  if (!(value > 0) || !Number.isFinite(value))
    throw new CliError(
      `llmbench predict: --rate must be requests per second > 0, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  return value
}

/** The model predicts TTFT, TPOT and E2E: an SLO on a reasoning phase is refused, not silently dropped. */
function slosFlag(flags: Record<string, unknown>, io: Io): Slo[] | undefined {
  const text = stringFlag(flags as never, 'slo')
  if (text === undefined) return undefined
  const pairs = sloPairs(text)
  const slos = slosOf(pairs, '--slo')
  const note = oldSloSpellingNote(pairs)
  if (note !== null) io.err(`${note}\n`)
  return slos
}

function slosOf(pairs: Record<string, number>, where = "the run's slo"): Slo[] {
  return Object.entries(pairs).flatMap(([key, threshold]) => {
    const parsed = parseSloKey(key)
    if (typeof parsed === 'string') throw new CliError(`llmbench predict: ${where}: ${parsed}`, EXIT.usage)
    if (!(threshold > 0))
      throw new CliError(`llmbench predict: ${where}: ${key} must be milliseconds > 0`, EXIT.usage)
    if (parsed.metric !== 'ttft' && parsed.metric !== 'tpot' && parsed.metric !== 'e2e') {
      if (where === '--slo')
        throw new CliError(
          `llmbench predict: --slo: the model predicts ttft, tpot and e2e, not ${parsed.metric}`,
          EXIT.usage,
        )
      return []
    }
    const { renamed: _, ...parts } = parsed
    return [{ key, ...parts, threshold }]
  })
}
