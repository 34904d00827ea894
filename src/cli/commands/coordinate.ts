import { writeJsonAtomic } from '../../result/write-json.js'
import { startCoordinator } from '../../run/shard/coordinator-server.js'
import { type CommandSpec, numberFlag, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

/** The port of `coordinate` by default, and the one k8s-manifest's Service exposes. */
export const DEFAULT_COORDINATOR_PORT = 7878

export const COORDINATE_SPEC: CommandSpec = {
  name: 'coordinate',
  summary:
    "Coordinate the shards of one run (llmbench run --shard I/N --coordinator URL): measures each shard's clock offset, starts every level at one instant for all, ends it when all finished; a shard lost ends the run and marks its level incomplete.",
  usage: 'llmbench coordinate --shards N [--host ADDR] [--port N] [--out FILE]',
  flags: [
    { name: 'shards', type: 'string', value: 'N', help: 'how many shards the run has (required)' },
    {
      name: 'host',
      type: 'string',
      value: 'ADDR',
      help: 'address to listen on (0.0.0.0 to be reached from other hosts)',
      default: '127.0.0.1',
    },
    {
      name: 'port',
      type: 'string',
      value: 'N',
      help: 'port to listen on (0 = a free one)',
      default: String(DEFAULT_COORDINATOR_PORT),
    },
    {
      name: 'out',
      type: 'string',
      value: 'FILE',
      help: 'write the coordination report (JSON) there when the run ends',
    },
    { name: 'json', type: 'boolean', help: 'print the coordination report to stdout' },
  ],
}

export async function coordinateCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(COORDINATE_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(COORDINATE_SPEC))
    return EXIT.ok
  }
  const shards = numberFlag(flags, 'shards')
  if (shards === undefined || !Number.isInteger(shards) || shards < 1)
    throw new CliError('llmbench coordinate: --shards N (a whole number ≥ 1) is required', EXIT.usage)
  const port = numberFlag(flags, 'port') ?? DEFAULT_COORDINATOR_PORT
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`--port: expected 0..65535, got ${stringFlag(flags, 'port')}`, EXIT.usage)
  const host = stringFlag(flags, 'host') ?? '127.0.0.1'
  const log = (line: string): void => io.err(`${line}\n`)
  let coordinator: Awaited<ReturnType<typeof startCoordinator>>
  try {
    coordinator = await startCoordinator({ shards, host, port, log })
  } catch (error) {
    throw new CliError(`llmbench coordinate: cannot listen on ${host}:${port}: ${String(error)}`, EXIT.usage)
  }
  // The URL is what the shards are given: said first, alone on its line (a test or a script reads it).
  io.err(`coordinator listening on ${coordinator.url} for ${shards} shards\n`)
  const stop = (): void => {
    log('coordinate: interrupted; the shards lose their coordinator and stop')
    void coordinator.close().then(() => process.exit(EXIT.interrupted))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    const report = await coordinator.done
    const out = stringFlag(flags, 'out')
    if (out !== undefined) writeJsonAtomic(out, report)
    if (flags.json === true) io.out(`${JSON.stringify(report, null, 2)}\n`)
    for (const level of report.levels)
      log(
        `level ${level.value}: ${level.complete ? 'complete' : `INCOMPLETE (${level.incomplete?.reason ?? 'cut'})`}` +
          (level.start_spread_ms === null ? '' : `, shards started within ${level.start_spread_ms} ms`),
      )
    if (report.incomplete !== null) {
      log(`coordinate: the run did not finish as one: ${report.incomplete.reason}`)
      return EXIT.coordination
    }
    log(`coordinate: all ${shards} shards finished ${report.levels.length} levels together`)
    return EXIT.ok
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    await coordinator.close()
  }
}
