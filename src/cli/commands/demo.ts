import type { RunConfig } from '../../config/types.js'
import { SIM_MODEL } from '../../sim/model-id.js'
import { type CommandSpec, type FlagSpec, numberFlag, parseFlags, renderHelp, stringFlag } from '../args.js'
import { EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { configFlags } from '../setting-flags.js'
import { LOAD_FLAGS, RUN_SPEC } from './run.js'
import { SIM_PARAM_FLAGS, simFaults, simParams } from './sim.js'
import { SIM_REASONING_FLAGS, simReasoningArgs } from './sim-reasoning.js'

/** A short gradient that shows the simulator's knee (16 slots) in about half a minute. */
export const DEMO_DEFAULTS = {
  levels: [1, 4, 8, 16, 32, 64],
  duration_s: 3,
  warmup: 2,
  input_tokens: 128,
  output_tokens: 64,
} as const

/** The load flags with the demo's own defaults shown in --help. */
const DEMO_LOAD_FLAGS: FlagSpec[] = LOAD_FLAGS.map((flag) => {
  const demoDefault: Record<string, string> = {
    levels: DEMO_DEFAULTS.levels.join(','),
    requests: 'none (runs by duration)',
    duration: String(DEMO_DEFAULTS.duration_s),
    warmup: String(DEMO_DEFAULTS.warmup),
    'input-tokens': String(DEMO_DEFAULTS.input_tokens),
    'output-tokens': String(DEMO_DEFAULTS.output_tokens),
  }
  const value = demoDefault[flag.name]
  return value === undefined ? flag : { ...flag, default: value }
})

/** --protocol: the simulator speaks every protocol, so the demo shows any of them with no key. */
const PROTOCOL_FLAG = RUN_SPEC.flags.filter((flag) => flag.name === 'protocol')

export const DEMO_SPEC: CommandSpec = {
  name: 'demo',
  summary: 'Start the built-in simulator on a free loopback port and run a short gradient against it.',
  usage: 'llmbench demo [flags]',
  flags: [...DEMO_LOAD_FLAGS, ...PROTOCOL_FLAG, ...SIM_PARAM_FLAGS, ...SIM_REASONING_FLAGS],
}

const DEMO_TEMPLATE_TOKENS = 12

export async function demoCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(DEMO_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(DEMO_SPEC))
    return EXIT.ok
  }
  simFaults(flags) // validated here: a bad value is a usage error, not a failed child process
  // Past --help only: the run's modules (client, tokenizer, workers) are the bulk of start-up.
  const [{ resolveEndpoint }, { startSimulatorProcess }, { executeRun }, { loadConfigOrThrow }] =
    await Promise.all([
      import('../../run/setup/resolve-endpoint.js'),
      import('../../sim/child.js'),
      import('../execute-run.js'),
      import('../load-config.js'),
    ])
  const faults = stringFlag(flags, 'fault')
  // The demo's server counts prompts exactly and wraps chat prompts in a 12-token "template", as a
  // real one does: the calibration line then shows the correction at work. It also reports llama.cpp's
  // timings (and always serves /metrics), so the demo shows server-side figures with no GPU.
  const sim = await startSimulatorProcess(simParams(flags), {
    ...(faults === undefined ? {} : { faults }),
    args: [
      '--prompt-counting',
      'exact',
      '--template-tokens',
      String(DEMO_TEMPLATE_TOKENS),
      '--timings',
      ...simReasoningArgs(flags),
      // Sessions and a shared prefix are prefix-cache runs: the server then has one, as vLLM's does.
      ...(flags.sessions === true || flags.jobs === true || (numberFlag(flags, 'shared-prefix') ?? 0) > 0
        ? ['--prefix-cache']
        : []),
    ],
  })
  try {
    const overrides = configFlags(flags)
    const config: RunConfig = loadConfigOrThrow([], {
      base_url: sim.url,
      model: SIM_MODEL,
      levels: [...DEMO_DEFAULTS.levels],
      warmup: DEMO_DEFAULTS.warmup,
      input_tokens: DEMO_DEFAULTS.input_tokens,
      output_tokens: DEMO_DEFAULTS.output_tokens,
      // Timed levels unless the user sized them: by requests, or by precision (requests are its floor).
      ...(overrides.requests === undefined && overrides.precision === undefined
        ? { duration: DEMO_DEFAULTS.duration_s }
        : {}),
      ...overrides,
      // The simulator is this machine's own child: an egress proxy would not reach it.
      proxy: false,
    })
    // The simulator needs no key: never send the user's real one to it.
    return await executeRun(config, flags, io, { endpoint: resolveEndpoint(config, null) })
  } finally {
    await sim.close()
  }
}
