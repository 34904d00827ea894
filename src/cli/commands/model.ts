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
    'llmbench model DIR\n\n' +
    "The server's slots, prefill time (fixed and per prompt token), decode step (empty batch and per sequence),\n" +
    'whether a prefill stalls decoding and the KV cache, fitted from the run in DIR (its records when it has\n' +
    'them, else its bench_result.json), each said measured or assumed; then how closely the model reproduces\n' +
    'every measured level. `predict DIR` runs it on other workloads; `sim --from DIR` serves it.',
  flags: [{ name: 'json', type: 'boolean', help: 'print the model as JSON (bench_result.json "model")' }],
}

export async function modelCommand(argv: string[], io: Io): Promise<number> {
  const { flags, positionals } = parseFlags(MODEL_SPEC, argv, true)
  if (flags.help === true) {
    io.out(renderHelp(MODEL_SPEC))
    return EXIT.ok
  }
  if (positionals.length !== 1)
    throw new CliError('llmbench model: give one result folder (or its bench_result.json)', EXIT.usage)
  const { model } = folderModel('model', positionals[0] as string)
  io.out(flags.json === true ? `${JSON.stringify(model, null, 2)}\n` : renderModel(model))
  return EXIT.ok
}
