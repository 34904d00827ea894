import { renderModel } from '../../report/model-text.js'
import { type CommandSpec, parseFlags, renderHelp } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import { folderModel } from '../folder-model.js'
import type { Io } from '../io.js'

export const MODEL_SPEC: CommandSpec = {
  name: 'model',
  summary:
    "Show the capacity model fitted on a result folder's run: each parameter with its 95% interval and how it was found.",
  usage:
    'llmbench model DIR\n' +
    'llmbench model --calibrate --url URL [--model ID] [--budget-s N] [--context N] [--out FILE]\n\n' +
    "The server's slots, prefill time (fixed and per prompt token), decode step (empty batch and per sequence),\n" +
    'whether a prefill stalls decoding and the KV cache, fitted from the run in DIR (its records when it has\n' +
    'them, else its bench_result.json), each said measured or assumed; then how closely the model reproduces\n' +
    'every measured level. `predict DIR` runs it on other workloads; `sim --from DIR` serves it.\n\n' +
    '--calibrate measures the server at URL instead, within a stated budget: prompts from short to 3/4 of its\n' +
    'context at one stream, decoding at batch sizes 1..slots at two prompt lengths, and a probe of its slots;\n' +
    'the plan is printed before and the time taken after. The model file (--out) holds every parameter with\n' +
    'its interval, its source (measured, server, assumed) and its range of validity, and the 90% prediction\n' +
    'interval calibrated on the points: `predict --model-file FILE` predicts from it.',
  flags: [
    {
      name: 'json',
      type: 'boolean',
      help: 'print the model as JSON (bench_result.json "model"; with --calibrate, the model file)',
    },
    {
      name: 'calibrate',
      type: 'boolean',
      help: 'calibrate against a live server (--url) and write a model file',
    },
    {
      name: 'url',
      type: 'string',
      value: 'URL',
      help: 'with --calibrate: the server base URL, with or without /v1',
    },
    {
      name: 'model',
      type: 'string',
      value: 'ID',
      help: 'with --calibrate: the model id',
      default: "the server's first in /v1/models",
    },
    {
      name: 'budget-s',
      type: 'string',
      value: 'N',
      help: 'with --calibrate: seconds the calibration may take in all',
      default: '150',
    },
    {
      name: 'context',
      type: 'string',
      value: 'N',
      help: 'with --calibrate: tokens of context per slot, where the server does not say (llama.cpp /props n_ctx)',
    },
    {
      name: 'api-key-env',
      type: 'string',
      value: 'NAME',
      help: 'with --calibrate: environment variable holding the API key',
      default: 'OPENAI_API_KEY',
    },
    {
      name: 'out',
      type: 'string',
      value: 'FILE',
      help: 'with --calibrate: the model file written',
      default: 'model.json',
    },
  ],
}

export async function modelCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(MODEL_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(MODEL_SPEC))
    return EXIT.ok
  }
  if (flags.calibrate === true) {
    if (positionals.length > 0)
      throw new CliError('llmbench model --calibrate: give the server with --url, not a folder', EXIT.usage)
    const { calibrateCommand } = await import('./model-calibrate.js')
    return calibrateCommand(flags, io)
  }
  const calibrateOnly = ['url', 'model', 'budget-s', 'context', 'api-key-env', 'out'].find(
    (name) => flags[name] !== undefined,
  )
  if (calibrateOnly !== undefined)
    throw new CliError(`llmbench model: --${calibrateOnly} goes with --calibrate`, EXIT.usage)
  if (positionals.length !== 1)
    throw new CliError('llmbench model: give one result folder (or its bench_result.json)', EXIT.usage)
  const { model } = folderModel('model', positionals[0] as string)
  io.out(flags.json === true ? `${JSON.stringify(model, null, 2)}\n` : renderModel(model))
  return EXIT.ok
}
