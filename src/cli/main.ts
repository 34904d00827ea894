#!/usr/bin/env node
import { ConfigError } from '../config/errors.js'
import { checkCommand, modelsCommand } from './commands/check.js'
import { compareCommand } from './commands/compare.js'
import { demoCommand } from './commands/demo.js'
import { COMMANDS_HELP } from './commands/help.js'
import { initCommand } from './commands/init.js'
import { k8sManifestCommand } from './commands/k8s-manifest.js'
import { mergeCommand } from './commands/merge.js'
import { reportCommand } from './commands/report.js'
import { runCommand } from './commands/run.js'
import { simCommand } from './commands/sim.js'
import { CliError, EXIT } from './exit-codes.js'
import { type Io, processIo } from './io.js'

const COMMANDS: Record<string, (argv: string[], io: Io) => Promise<number>> = {
  run: runCommand,
  demo: demoCommand,
  sim: simCommand,
  init: initCommand,
  report: reportCommand,
  compare: compareCommand,
  check: checkCommand,
  models: modelsCommand,
  merge: mergeCommand,
  'k8s-manifest': k8sManifestCommand,
}

/** argv → command → exit code. The only place that calls process.exit (besides a second Ctrl-C). */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    processIo.out(COMMANDS_HELP)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  const command = COMMANDS[name]
  if (command === undefined) {
    processIo.err(`llmbench: unknown command '${name}'\n\n${COMMANDS_HELP}`)
    return EXIT.usage
  }
  try {
    return await command(rest, processIo)
  } catch (error) {
    if (error instanceof CliError || error instanceof ConfigError) {
      processIo.err(`${error.message}\n`)
      return error.exitCode
    }
    throw error
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    processIo.err(
      `llmbench: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    process.exitCode = 1
  },
)
