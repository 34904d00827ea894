import { resolveSimParams, SIM_CPU_LIKE, SIM_DEFAULTS, type SimParams } from '../../model/engine.js'
import { EXIT_WITH_PARENT } from '../../sim/child.js'
import { FAULT_KINDS, type FaultRate, parseFaults } from '../../sim/faults.js'
import { SIM_MODEL } from '../../sim/model-id.js'
import type { SimQuirks } from '../../sim/quirks.js'
import type { SimulatorOptions } from '../../sim/server.js'
import type { SimTwin, twinParams } from '../../sim/twin.js'
import {
  type CommandSpec,
  type FlagSpec,
  numberFlag,
  type ParsedFlags,
  parseFlags,
  renderHelp,
  stringFlag,
} from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { SIM_REASONING_FLAGS, simReasoning } from './sim-reasoning.js'

/** The capacity-model flags, shared by `sim` and `demo`: --slots, --prefill-base-ms, ... */
const PARAM_FLAGS: { key: keyof SimParams; help: string }[] = [
  { key: 'slots', help: 'batch slots (requests decoded together)' },
  { key: 'queue_limit', help: 'max waiting requests before 503 (0 = unbounded)' },
  { key: 'prefill_base_ms', help: 'fixed prefill time per request, ms' },
  { key: 'prefill_ms_per_token', help: 'extra prefill time per input token, ms' },
  { key: 'decode_base_ms', help: 'decode step time, ms' },
  { key: 'decode_ms_per_seq', help: 'extra decode step time per running sequence, ms' },
  {
    key: 'prefill_ms_per_token_sq',
    help: 'extra prefill time per input token squared, ms (attention over a long prompt)',
  },
  {
    key: 'decode_ms_per_context_token',
    help: 'extra decode step time per token of context held by the requests in a slot, ms',
  },
  { key: 'seed', help: 'seed of the generated text' },
  { key: 'prefill_blocks_decode', help: '1 = prefills run one at a time and stall decoding (CPU engine)' },
  {
    key: 'kv_cache_tokens',
    help: 'KV-cache size in tokens, for /metrics vllm:kv_cache_usage_perc (prompt + generated tokens held / this)',
  },
]

const flagName = (key: string): string => key.replaceAll('_', '-')

export const SIM_PARAM_FLAGS: FlagSpec[] = [
  ...PARAM_FLAGS.map(
    ({ key, help }): FlagSpec => ({
      name: flagName(key),
      type: 'string',
      value: 'N',
      help,
      default: String(SIM_DEFAULTS[key]),
    }),
  ),
  {
    name: 'cpu-like',
    type: 'boolean',
    help: `scale like llama.cpp on a CPU (sub-linear up to the slots, then flat): ${Object.entries(
      SIM_CPU_LIKE,
    )
      .map(([key, value]) => `--${flagName(key)} ${value}`)
      .join(' ')}, each overridable`,
  },
  {
    name: 'fault',
    type: 'string',
    value: 'KIND:RATE,...',
    help: `inject faults into that share of requests (seeded); kinds: ${FAULT_KINDS.join(', ')}`,
  },
]

/** --fault KIND:RATE,... as the simulator takes it; a bad value is a usage error. */
export function simFaults(flags: ParsedFlags): FaultRate[] {
  const text = stringFlag(flags, 'fault')
  if (text === undefined) return []
  const faults = parseFaults(text)
  if (typeof faults === 'string') throw new CliError(faults, EXIT.usage)
  return faults
}

export const SIM_SPEC: CommandSpec = {
  name: 'sim',
  summary:
    'Serve the built-in OpenAI-compatible simulator (continuous-batching capacity model) until Ctrl-C.',
  usage: 'llmbench sim [--port N] [--slots N] [...] | llmbench sim --from DIR [--slots N] [...]',
  flags: [
    {
      name: 'from',
      type: 'string',
      value: 'DIR',
      help: 'serve the twin of the server a run measured: the capacity model fitted on the run in DIR (its model id, its llama.cpp timings if it sent them); any capacity flag given overrides the fitted value',
    },
    { name: 'host', type: 'string', value: 'HOST', help: 'address to bind', default: '127.0.0.1' },
    { name: 'port', type: 'string', value: 'N', help: 'port (0 = a free one)', default: '8000' },
    {
      name: 'model',
      type: 'string',
      value: 'ID',
      help: 'the model id served (with --from: the run’s)',
      default: SIM_MODEL,
    },
    ...SIM_PARAM_FLAGS,
    {
      name: 'prompt-counting',
      type: 'string',
      value: 'estimate|exact',
      help: 'usage.prompt_tokens as chars/4, or exact o200k tokens',
      default: 'estimate',
    },
    {
      name: 'template-tokens',
      type: 'string',
      value: 'N',
      help: "tokens a chat template adds to every chat prompt's count",
      default: '0',
    },
    {
      name: 'image-patch-px',
      type: 'string',
      value: 'PX',
      help: 'side of one image token: an image costs ceil(h/PX)*ceil(w/PX) prompt tokens (28: Qwen2-VL)',
      default: '28',
    },
    {
      name: 'audio-tokens-per-s',
      type: 'string',
      value: 'N',
      help: 'prompt tokens one second of input_audio costs (25: Qwen2-Audio)',
      default: '25',
    },
    {
      name: 'close-after-response',
      type: 'boolean',
      help: "close the connection 1 ms after each streamed response, despite Keep-Alive headers (llama.cpp's habit)",
    },
    {
      name: 'ignore-disconnect',
      type: 'boolean',
      help: 'a leaking server: a request whose client closed the connection keeps its slot, decoding on to max_tokens',
    },
    {
      name: 'tokens-per-event',
      type: 'string',
      value: 'N',
      help: 'output tokens per streamed event (speculative decoding, batching proxies)',
      default: '1',
    },
    {
      name: 'early-stop',
      type: 'string',
      value: 'SHARE',
      help: 'share of requests ending before max_tokens (unless ignore_eos/min_tokens)',
      default: '0',
    },
    {
      name: 'draft-acceptance',
      type: 'string',
      value: 'RATE',
      help: 'speculative decoding: a draft model whose tokens the target accepts at this rate (accepted / drafted, 0 to 1); each step writes its tokens back to back',
    },
    {
      name: 'draft-max',
      type: 'string',
      value: 'N',
      help: 'with --draft-acceptance: draft tokens per step (1 to 16)',
      default: '4',
    },
    {
      name: 'timings',
      type: 'boolean',
      help: "add llama.cpp's timings (prompt_n, prompt_ms, predicted_n, predicted_ms, ...) to each response",
    },
    ...SIM_REASONING_FLAGS,
    {
      name: 'prefix-cache',
      type: 'boolean',
      help: 'cache prompt prefixes (16-token blocks, LRU, --kv-cache-tokens large): hits skip prefill and show as cached_tokens',
    },
  ],
}

/** The quirk flags: --close-after-response, --ignore-disconnect, --tokens-per-event. */
function simQuirks(flags: ParsedFlags): SimQuirks {
  const perEvent = numberFlag(flags, 'tokens-per-event') ?? 1
  if (!(Number.isInteger(perEvent) && perEvent >= 1))
    throw new CliError(
      `--tokens-per-event: expected an integer >= 1, got ${stringFlag(flags, 'tokens-per-event')}`,
      EXIT.usage,
    )
  return {
    close_after_response: flags['close-after-response'] === true,
    ignore_disconnect: flags['ignore-disconnect'] === true,
    tokens_per_event: perEvent,
  }
}

/** --draft-acceptance, --draft-max: a draft model (sim/draft-model.ts), or none. */
function simDraft(flags: ParsedFlags): Pick<SimulatorOptions, 'draft'> {
  const acceptance = numberFlag(flags, 'draft-acceptance')
  if (acceptance === undefined) return {}
  if (!(acceptance >= 0 && acceptance <= 1))
    throw new CliError(
      `--draft-acceptance: expected a rate from 0 to 1, got ${stringFlag(flags, 'draft-acceptance')}`,
      EXIT.usage,
    )
  const max = numberFlag(flags, 'draft-max') ?? 4
  if (!(Number.isInteger(max) && max >= 1 && max <= 16))
    throw new CliError(
      `--draft-max: expected an integer from 1 to 16, got ${stringFlag(flags, 'draft-max')}`,
      EXIT.usage,
    )
  return { draft: { acceptance, max } }
}

/** The simulator's workload-shaping flags: prompt counting, template overhead, image tokens, early stops. */
function simWorkloadOptions(
  flags: ParsedFlags,
): Pick<
  SimulatorOptions,
  'prompt_counting' | 'template_tokens' | 'image_patch_px' | 'audio_tokens_per_s' | 'early_stop'
> {
  const counting = stringFlag(flags, 'prompt-counting') ?? 'estimate'
  if (counting !== 'estimate' && counting !== 'exact')
    throw new CliError(`--prompt-counting: expected estimate or exact, got ${counting}`, EXIT.usage)
  const template = numberFlag(flags, 'template-tokens') ?? 0
  if (!(Number.isInteger(template) && template >= 0))
    throw new CliError(
      `--template-tokens: expected a non-negative integer, got ${stringFlag(flags, 'template-tokens')}`,
      EXIT.usage,
    )
  const patch = numberFlag(flags, 'image-patch-px') ?? 28
  if (!(Number.isInteger(patch) && patch >= 1))
    throw new CliError(
      `--image-patch-px: expected an integer >= 1, got ${stringFlag(flags, 'image-patch-px')}`,
      EXIT.usage,
    )
  const audio = numberFlag(flags, 'audio-tokens-per-s') ?? 25
  if (!(audio > 0))
    throw new CliError(
      `--audio-tokens-per-s: expected a number above 0, got ${stringFlag(flags, 'audio-tokens-per-s')}`,
      EXIT.usage,
    )
  const earlyStop = numberFlag(flags, 'early-stop') ?? 0
  if (!(earlyStop >= 0 && earlyStop <= 1))
    throw new CliError(
      `--early-stop: expected a share from 0 to 1, got ${stringFlag(flags, 'early-stop')}`,
      EXIT.usage,
    )
  return {
    prompt_counting: counting,
    template_tokens: template,
    image_patch_px: patch,
    audio_tokens_per_s: audio,
    early_stop: earlyStop,
  }
}

/**
 * Simulator parameters from flags, checked here so that a bad value is a usage error naming the
 * flag (also for `demo`, whose simulator is a child process).
 */
export function simParams(flags: ParsedFlags): Partial<SimParams> {
  const params: Partial<SimParams> = flags['cpu-like'] === true ? { ...SIM_CPU_LIKE } : {}
  for (const { key } of PARAM_FLAGS) {
    const value = numberFlag(flags, flagName(key))
    if (value === undefined) continue
    if (!Number.isFinite(value) || value < 0) {
      throw new CliError(
        `--${flagName(key)}: expected a non-negative number, got ${stringFlag(flags, flagName(key))}`,
        EXIT.usage,
      )
    }
    params[key] = value
  }
  try {
    resolveSimParams(params)
  } catch (error) {
    if (error instanceof RangeError) throw new CliError(error.message, EXIT.usage)
    throw error
  }
  return params
}

export async function simCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(SIM_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(SIM_SPEC))
    return EXIT.ok
  }
  const port = numberFlag(flags, 'port') ?? 8000
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port: expected a port number 0-65535, got ${stringFlag(flags, 'port')}`, EXIT.usage)
  }
  const from = stringFlag(flags, 'from')
  const twin = from === undefined ? null : await simTwin(from, flags, io)
  const model = stringFlag(flags, 'model') ?? twin?.modelId ?? SIM_MODEL
  // The server (and the o200k tokenizer it counts prompts with) loads past --help only.
  const { startSimulator } = await import('../../sim/server.js')
  const sim = await startSimulator({
    ...(twin?.params ?? simParams(flags)),
    faults: simFaults(flags),
    ...simWorkloadOptions(flags),
    quirks: simQuirks(flags),
    ...simDraft(flags),
    timings: flags.timings === true || twin?.timings === true,
    ...(simReasoning(flags) === undefined ? {} : { reasoning: simReasoning(flags) }),
    prefix_cache: flags['prefix-cache'] === true,
    host: stringFlag(flags, 'host') ?? '127.0.0.1',
    port,
    model,
  })
  io.out(`llmbench simulator listening on ${sim.url} (model ${model}); Ctrl-C stops it\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
    // Started by a parent process as its server (sim/child.ts): it goes when the parent goes, even
    // killed without a chance to stop it (a test cut at its timeout), instead of serving on, orphaned.
    if (process.env[EXIT_WITH_PARENT] === '1') {
      process.stdin.once('close', resolve)
      process.stdin.resume()
    }
  })
  // The watched stdin would keep the process alive once the server is closed.
  if (process.env[EXIT_WITH_PARENT] === '1') process.stdin.destroy()
  await sim.close()
  return EXIT.ok
}

/**
 * --from DIR: the twin's parameters (the model fitted on the run in DIR, explicit capacity flags over
 * it), told on stdout with where each came from. --cpu-like would set a whole other server: refused.
 */
async function simTwin(
  from: string,
  flags: ParsedFlags,
  io: Io,
): Promise<{ params: SimParams; modelId: string; timings: boolean }> {
  if (flags['cpu-like'] === true)
    throw new CliError(
      '--from and --cpu-like conflict: --from serves the server the run measured; give single capacity flags (--slots N, ...) to change it',
      EXIT.usage,
    )
  // The result model (and the fit) loads only for --from.
  const { loadTwin, TwinError, twinParams } = await import('../../sim/twin.js')
  let twin: SimTwin
  let served: ReturnType<typeof twinParams>
  try {
    twin = loadTwin(from)
    served = twinParams(twin, simParams(flags))
  } catch (error) {
    if (error instanceof TwinError || error instanceof RangeError)
      throw new CliError(`sim --from: ${error.message}`, EXIT.usage)
    throw error
  }
  const source =
    twin.from === 'summary'
      ? `the capacity model in ${twin.dir}`
      : `a capacity model fitted from the records in ${twin.dir} (its summary carries none)`
  const timings = twin.timings ? '; llama.cpp timings on, as the server sent them' : ''
  io.out(`llmbench sim --from: serving ${source}${timings}:\n${served.lines.join('\n')}\n`)
  return { params: served.params, modelId: twin.modelId, timings: twin.timings }
}
