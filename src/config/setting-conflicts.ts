import { SETTINGS, type SettingId } from './settings.js'
import { type Patch, type Source, sourceKeys, valueAtPath } from './source-schemas.js'

/** A config file as loaded: its name, its kind, what it sets, and the document as written. */
export interface FileLayer {
  file: string
  source: Exclude<Source, 'flags'>
  patch: Patch
  raw: unknown
}

/**
 * Settings that two files give different values: which one won, said, not silently applied. The
 * files are in precedence order (docs/configuration.md: settings.json < config.toml, each kind in
 * the order given), so the last one setting a value wins. The stop rule counts as one setting: a
 * file ending levels by requests and a later one by duration is the later one's choice.
 */
export function settingConflicts(files: readonly FileLayer[], flags: Patch | null = null): string[] {
  const notes: string[] = []
  const flagged = (section: string, name: string): boolean =>
    (flags as Record<string, Record<string, unknown> | undefined> | null)?.[section]?.[name] !== undefined
  for (const [id, setting] of Object.entries(SETTINGS) as [SettingId, (typeof SETTINGS)[SettingId]][]) {
    const [section, name] = setting.at as [string, string]
    const givers = files.flatMap((layer) => {
      const value = (layer.patch as Record<string, Record<string, unknown> | undefined>)[section]?.[name]
      return value === undefined ? [] : [{ layer, value, key: keyIn(layer, id) }]
    })
    const distinct = new Set(givers.map((giver) => JSON.stringify(giver.value)))
    if (distinct.size < 2) continue
    const winner = givers.at(-1) as (typeof givers)[number]
    // A flag overrides every file: saying a file won would name a value the run did not use.
    const outcome = flagged(section, name)
      ? `--${'flag' in setting ? setting.flag.name : id} overrides both`
      : `${winner.layer.file} wins`
    notes.push(
      `${givers.map((g) => `${g.layer.file} sets ${g.key} = ${JSON.stringify(g.value)}`).join(', ')}: ` +
        `${outcome} (${PRECEDENCE})`,
    )
  }
  const stopRule = files.flatMap((layer) => {
    const load = layer.patch.load
    if (load?.duration_per_level_s != null)
      return [{ layer, rule: `${keyIn(layer, 'duration')} = ${load.duration_per_level_s}` }]
    if (load?.requests_per_level != null)
      return [{ layer, rule: `${keyIn(layer, 'requests')} = ${load.requests_per_level}` }]
    return []
  })
  const kinds = new Set(stopRule.map((giver) => giver.rule.split(' = ')[0]?.includes('duration')))
  if (kinds.size === 2) {
    const winner = stopRule.at(-1) as (typeof stopRule)[number]
    const byFlag = flagged('load', 'duration_per_level_s')
      ? '--duration'
      : flagged('load', 'requests_per_level')
        ? '--requests'
        : null
    const outcome =
      byFlag !== null
        ? `${byFlag} overrides both, levels end by ${byFlag === '--duration' ? 'time' : 'request count'}`
        : `${winner.layer.file} wins, levels end by ${winner.rule.includes('duration') ? 'time' : 'request count'}`
    notes.push(
      `the files end a level differently (${stopRule.map((g) => `${g.layer.file}: ${g.rule}`).join('; ')}): ` +
        `${outcome} (${PRECEDENCE})`,
    )
  }
  return notes
}

const PRECEDENCE = 'flags > config.toml > settings.json, later -c over earlier; docs/configuration.md'

/** The key the file used for the setting (its first one present), e.g. "bench.requests_per_level". */
export function keyIn(layer: FileLayer, id: SettingId): string {
  const keys = sourceKeys(SETTINGS[id], id, layer.source)
  const present = keys.find((key) => valueAtPath(layer.raw, key.path) !== undefined)
  return (present ?? keys[0])?.path ?? id
}
