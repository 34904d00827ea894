import { type FileLayer, keyIn } from './setting-conflicts.js'
import { SETTINGS, type Setting, type SettingId } from './settings.js'
import type { Patch, Source } from './source-schemas.js'

/** How a message names the place a setting was given: "llm.base_url in settings.json", or its flag. */
export type WhereSet = (id: SettingId) => string

/** A source as loadRunConfig layers it: a file (FileLayer) or the flags and defaults (no file). */
export interface SourceLayer {
  patch: Patch | null
  file?: string
  source?: Source
}

/**
 * Where each setting's value came from, from the layers in precedence order (the last one setting it
 * wins): the key in the file that set it, or the flag when a flag set it or nothing did (the flag is
 * then where to give it). A hint that says "check --base-url" when the URL came from settings.json
 * sends the user to the wrong place: the key and the file are where the fix goes.
 */
export function whereSetIn(layers: readonly SourceLayer[]): WhereSet {
  const places = new Map<SettingId, string>()
  for (const [id, setting] of Object.entries(SETTINGS) as [SettingId, Setting][]) {
    const [section, name] = setting.at as [string, string]
    const winner = layers.findLast(
      (layer) =>
        (layer.patch as Record<string, Record<string, unknown> | undefined> | null)?.[section]?.[name] !==
        undefined,
    )
    if (winner?.file !== undefined && (winner.source === 'json' || winner.source === 'toml'))
      places.set(id, `${keyIn(winner as FileLayer, id)} in ${winner.file}`)
  }
  return (id) => places.get(id) ?? flagOf(id)
}

/** The flag of a setting ("--base-url"), or its id when it has none: where a hint names it by default. */
export function flagOf(id: SettingId): string {
  const setting = SETTINGS[id] as Setting
  if (setting.flag === undefined)
    return setting.repeatOf === undefined ? id : `--${setting.repeatOf} (repeated)`
  return `--${setting.flag.name}`
}

const BY_FLAG = new Map(
  (Object.entries(SETTINGS) as [SettingId, Setting][]).flatMap(([id, setting]) =>
    setting.flag === undefined ? [] : [[setting.flag.name, id] as const],
  ),
)

/**
 * A hint rewritten to name the key and file a setting came from in place of its flag ("check
 * --base-url" → "check llm.base_url in settings.json"). Hints are written once, naming flags (what
 * results store, and what `report` shows without the config); the run that knows its files names
 * them when it prints. Only whole flags of the settings table change; anything else is kept.
 */
export function nameWhereSet(text: string, where: WhereSet): string {
  return text.replace(/(?<![\w-])--([a-z][a-z0-9-]*)(?![\w-])/g, (flag, name: string) => {
    const id = BY_FLAG.get(name)
    return id === undefined ? flag : where(id)
  })
}
