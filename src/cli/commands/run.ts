import { type CommandSpec, type FlagSpec, parseFlags, renderHelp } from '../args.js'
import { EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { SETTING_FLAG_TABLE } from '../setting-flag-table.js'
import { WIDE_FLAG } from '../table-width.js'

/** Flags that shape the load and the output; shared by `run` and `demo`. */
export const LOAD_FLAGS: FlagSpec[] = [
  ...SETTING_FLAG_TABLE.load,
  { name: 'force', type: 'boolean', help: "replace the run already in --out (that run's files only)" },
  { name: 'quiet', type: 'boolean', help: 'no progress lines on stderr' },
  { name: 'json', type: 'boolean', help: 'print bench_result.json to stdout instead of the table' },
  WIDE_FLAG,
]

export const RUN_SPEC: CommandSpec = {
  name: 'run',
  summary: 'Run the concurrency gradient against an OpenAI-compatible endpoint and write the result folder.',
  usage: 'llmbench run [-c settings.json] [-c config.toml] [flags]',
  flags: [
    {
      name: 'config',
      short: 'c',
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'settings.json or config.toml (repeatable)',
    },
    ...SETTING_FLAG_TABLE.target,
    ...LOAD_FLAGS,
    {
      name: 'shard',
      type: 'string',
      value: 'I/N',
      help: 'run shard I (0-based) of N of every level',
      default: '$JOB_COMPLETION_INDEX/$JOB_COMPLETIONS when set',
    },
    {
      name: 'coordinator',
      type: 'string',
      value: 'URL',
      help: 'with --shard: the URL of `llmbench coordinate`, which starts every level at one instant for all shards',
    },
    {
      name: 'start-at',
      type: 'string',
      value: 'TIME',
      help: 'wall-clock start of the first level: ISO time or epoch seconds',
    },
    {
      name: 'level-span',
      type: 'string',
      value: 'SECONDS',
      help: 'with --start-at: level k starts at start + k × span',
      default: 'derived for timed levels',
    },
  ],
}

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(RUN_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(RUN_SPEC))
    return EXIT.ok
  }
  // Loaded only past --help: the config schemas, the client, tokenizers and workers are the bulk of start-up.
  const [{ loadConfigOrThrow }, { executeRun }, { configFlags }] = await Promise.all([
    import('../load-config.js'),
    import('../execute-run.js'),
    import('../setting-flags.js'),
  ])
  const configFiles = (flags.config as string[] | undefined) ?? []
  const config = loadConfigOrThrow(configFiles, configFlags(flags))
  return executeRun(config, flags, io)
}
