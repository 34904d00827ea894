import { ConfigError } from '../config/errors.js'
import { COMMANDS_HELP } from './commands/help.js'
import { CliError, EXIT } from './exit-codes.js'
import type { Io } from './io.js'
import { isVersionFlag, versionLine } from './version-flag.js'

type Command = (argv: string[], io: Io) => Promise<number>

/**
 * Each command's modules load only when that command runs: importing every command up front opens
 * hundreds of files (d3, zod, undici...), which alone fails under a tight `ulimit -n`.
 */
const COMMANDS: Record<string, (help: boolean) => Promise<Command>> = {
  run: async (help) =>
    (await importInStages(help ? [] : RUN_STAGES, () => import('./commands/run.js'))).runCommand,
  demo: async (help) =>
    (await importInStages(help ? [] : RUN_STAGES, () => import('./commands/demo.js'))).demoCommand,
  sim: async () => (await import('./commands/sim.js')).simCommand,
  init: async () => (await import('./commands/init.js')).initCommand,
  report: async () => (await import('./commands/report.js')).reportCommand,
  compare: async () => (await import('./commands/compare.js')).compareCommand,
  check: async () => (await import('./commands/check.js')).checkCommand,
  models: async () => (await import('./commands/check.js')).modelsCommand,
  merge: async () => (await import('./commands/merge.js')).mergeCommand,
  coordinate: async () => (await import('./commands/coordinate.js')).coordinateCommand,
  model: async () => (await import('./commands/model.js')).modelCommand,
  predict: async () => (await import('./commands/predict.js')).predictCommand,
  'k8s-manifest': async () => (await import('./commands/k8s-manifest.js')).k8sManifestCommand,
}

/**
 * Parts of the run command's module graph, loaded one after another before the command: the ESM
 * loader reads every module of a graph it links at once, and the run graph alone is wide enough to
 * open more files together than `ulimit -n 64` allows. Loaded in stages, each is narrower.
 */
const RUN_STAGES = [
  () => import('../metrics/summarize.js'),
  () => import('../server-metrics/level-figures.js'),
  () => import('../result/build-result.js'),
  () => import('../run/plan/prepare-workload.js'),
  () => import('../run/setup/preflight.js'),
  () => import('../run/run-gradient.js'),
]

async function importInStages<T>(
  stages: readonly (() => Promise<unknown>)[],
  last: () => Promise<T>,
): Promise<T> {
  for (const stage of stages) await stage()
  return last()
}

/**
 * argv → command → exit code, every word through `io`. The process around it (main.ts) sets the exit
 * code; tests of a command's answers call this in their own process (test/helpers/cli.ts).
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(COMMANDS_HELP)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  if (isVersionFlag(name)) {
    io.out(versionLine())
    return EXIT.ok
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (load === undefined) {
    io.err(`llmbench: unknown command '${name}'\n\n${COMMANDS_HELP}`)
    return EXIT.usage
  }
  try {
    // --help loads only what the help needs (the command's own module), not the run's graph.
    const command = await load(rest.includes('--help') || rest.includes('-h'))
    return await command(rest, io)
  } catch (error) {
    if (error instanceof CliError || error instanceof ConfigError) {
      io.err(`${error.message}\n`)
      return error.exitCode
    }
    throw error
  }
}
