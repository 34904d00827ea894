import { type CommandSpec, numberFlag, parseFlags, renderHelp } from '../args.js'
import { EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { configFlags } from '../setting-flags.js'
import { RUN_SPEC } from './run.js'

/** The target flags of `run` (files, URL, endpoint, model, key variable, timeouts). */
const TARGET_FLAGS = RUN_SPEC.flags.filter((flag) =>
  [
    'config',
    'base-url',
    'endpoint',
    'protocol',
    'model',
    'api-key-env',
    'auth',
    'header',
    'timeout',
    'connect-timeout',
    'no-stream',
    'no-proxy',
  ].includes(flag.name),
)

export const CHECK_SPEC: CommandSpec = {
  name: 'check',
  summary:
    'One streamed request, tokens printed as they arrive, then TTFT/TPOT/usage; tells unreachable host, TLS, key, model, endpoint and stream-format problems apart (exit 3).',
  usage: 'llmbench check [-c FILE] [--base-url URL] [--model ID] [--output-tokens N]',
  flags: [
    ...TARGET_FLAGS,
    { name: 'output-tokens', type: 'string', value: 'N', help: 'max_tokens of the request', default: '32' },
  ],
}

export const MODELS_SPEC: CommandSpec = {
  name: 'models',
  summary: 'GET /v1/models and print the served model ids, one per line.',
  usage: 'llmbench models [-c FILE] [--base-url URL] [--api-key-env NAME]',
  flags: TARGET_FLAGS.filter((flag) =>
    ['config', 'base-url', 'api-key-env', 'auth', 'header', 'timeout', 'no-proxy'].includes(flag.name),
  ),
}

/** What check and models use past --help: the config, the client and the preflight request. */
async function checkModules() {
  const [
    { loadConfigOrThrow },
    { hintsFor, preflightSummaryNamed },
    { endpointFromEnv },
    { fetchModels },
    { runPreflight },
    { LiveRedactor },
    { describeTiming, timeProbes },
    { proxyNote },
  ] = await Promise.all([
    import('../load-config.js'),
    import('../hints-where-set.js'),
    import('../../run/setup/resolve-endpoint.js'),
    import('../../run/setup/models.js'),
    import('../../run/setup/preflight.js'),
    import('../../client/redact.js'),
    import('../../run/setup/probe-timing.js'),
    import('../../client/proxy.js'),
  ])
  return {
    loadConfigOrThrow,
    hintsFor,
    preflightSummaryNamed,
    endpointFromEnv,
    fetchModels,
    runPreflight,
    LiveRedactor,
    describeTiming,
    timeProbes,
    proxyNote,
  }
}

export async function checkCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(CHECK_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(CHECK_SPEC))
    return EXIT.ok
  }
  const {
    loadConfigOrThrow,
    hintsFor,
    preflightSummaryNamed,
    endpointFromEnv,
    runPreflight,
    LiveRedactor,
    describeTiming,
    timeProbes,
    proxyNote,
  } = await checkModules()
  const config = loadConfigOrThrow((flags.config as string[] | undefined) ?? [], configFlags(flags))
  const endpoint = endpointFromEnv(config, process.env, (line) => io.err(`${line}\n`))
  const proxy = proxyNote(endpoint.url, endpoint.proxy)
  if (proxy !== null) io.err(`${proxy}\n`)
  const maxTokens = numberFlag(flags, 'output-tokens') ?? 32
  // The text goes out as it arrives, but never the key: a server may echo it, split over two events.
  const live = new LiveRedactor(endpoint.secrets, (text) => io.out(text))
  const result = await runPreflight(endpoint, {
    maxTokens,
    onText: (text) => live.push(text),
    label: 'check',
  })
  live.end()
  io.out('\n')
  // The answer goes where the tokens go (`check > file` keeps both); a failure is an error, on stderr.
  const summary = `${preflightSummaryNamed(result.summary, hintsFor(config))}\n`
  if (!result.ok) {
    io.err(summary)
    return EXIT.preflight
  }
  io.out(summary)
  // One cold request's TTFT and TPOT swing several-fold: a few warm probes say what to expect.
  const { timing } = await timeProbes(endpoint)
  if (timing !== null) io.out(`${describeTiming(timing)}\n`)
  return EXIT.ok
}

export async function modelsCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(MODELS_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(MODELS_SPEC))
    return EXIT.ok
  }
  const { loadConfigOrThrow, endpointFromEnv, fetchModels } = await checkModules()
  // The model is not needed to list models: a placeholder satisfies the config's final check.
  const config = loadConfigOrThrow((flags.config as string[] | undefined) ?? [], {
    model: '-',
    ...configFlags(flags),
  })
  const endpoint = endpointFromEnv(config, process.env, (line) => io.err(`${line}\n`))
  const listed = await fetchModels(endpoint, endpoint.timeoutMs)
  if ('error' in listed) {
    io.err(`llmbench models: ${listed.error}\n`)
    return EXIT.preflight
  }
  io.out(listed.ids.map((id) => `${id}\n`).join(''))
  return EXIT.ok
}
