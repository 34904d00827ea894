import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONFIG_TOML_TEMPLATE, INIT_NOTES, SETTINGS_JSON_TEMPLATE } from '../../config/templates.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'

export const INIT_SPEC: CommandSpec = {
  name: 'init',
  summary: 'Write commented settings.json and config.toml skeletons to start from.',
  usage: 'llmbench init [--dir DIR] [--force]',
  flags: [
    { name: 'dir', type: 'string', value: 'DIR', help: 'folder to write into', default: '.' },
    { name: 'force', type: 'boolean', help: 'overwrite existing files' },
  ],
}

export async function initCommand(argv: string[], io: Io): Promise<number> {
  const { flags } = parseFlags(INIT_SPEC, argv)
  if (flags.help === true) {
    io.out(renderHelp(INIT_SPEC))
    return EXIT.ok
  }
  const dir = stringFlag(flags, 'dir') ?? '.'
  const files = [
    { path: join(dir, 'settings.json'), text: SETTINGS_JSON_TEMPLATE },
    { path: join(dir, 'config.toml'), text: CONFIG_TOML_TEMPLATE },
  ]
  const existing = files.filter((file) => existsSync(file.path)).map((file) => file.path)
  if (existing.length > 0 && flags.force !== true) {
    // Refuse before writing anything: never leave one file new and the other old.
    throw new CliError(`not overwriting ${existing.join(' and ')} (use --force)`, EXIT.usage)
  }
  for (const file of files) writeFileSync(file.path, file.text)
  io.out(`wrote ${files.map((file) => file.path).join(' and ')}\n\n${INIT_NOTES}\n`)
  return EXIT.ok
}
