/**
 * The schemas of settings.json, config.toml and the flags, and each source's patch of RunConfig, all
 * derived from the settings table: a key is accepted, validated and applied in one place.
 */

import { z } from '../zod.js'
import { expect } from './schema.js'
import { type ConfigPath, SETTINGS, type Setting, type SettingId, type SourceKey } from './settings.js'
import type { RunConfig } from './types.js'

export type Source = 'json' | 'toml' | 'flags'

/** A partial RunConfig: what one source sets. Keys it does not set are absent, never undefined. */
export type Patch = { [S in Exclude<keyof RunConfig, 'pricing'>]?: Partial<RunConfig[S]> } & {
  pricing?: Partial<NonNullable<RunConfig['pricing']>>
}

const PRICING_SECTION = 'a table ([pricing]) with input_per_mtok, output_per_mtok, currency and/or max_cost'

/** What each file calls its sections, in the order a mistyped top-level key lists them. */
const SECTIONS: Record<'json' | 'toml', { document: string; sections: Record<string, string> }> = {
  json: {
    document: 'a JSON object with "llm" and/or "bench" sections',
    sections: {
      llm: 'an object (the "llm" section)',
      bench: 'an object (the "bench" section)',
      pricing: PRICING_SECTION,
      server_metrics: 'an object (the "server_metrics" section)',
    },
  },
  toml: {
    document:
      'a TOML document with [target], [load], [workload], [metrics], [client], [slo], [pricing] and/or [server_metrics] tables',
    sections: {
      target: 'a table ([target])',
      load: 'a table ([load])',
      workload: 'a table ([workload])',
      pricing: PRICING_SECTION,
      metrics: 'a table ([metrics])',
      client: 'a table ([client])',
      server_metrics: 'a table ([server_metrics])',
    },
  },
}

const ENTRIES = Object.entries(SETTINGS) as [SettingId, Setting][]

/** The keys a source gives a setting, in precedence order (flags: the setting's id). */
export function sourceKeys(setting: Setting, id: string, source: Source): SourceKey[] {
  if (source === 'flags') {
    // A list the repeats of another setting's flag fill (--base-url A --base-url B → more_base_urls).
    if (setting.flag === undefined) return setting.repeatOf === undefined ? [] : [{ path: id }]
    return [{ path: id, ...(setting.flag.schema === undefined ? {} : { schema: setting.flag.schema }) }]
  }
  const keys = source === 'json' ? setting.json : setting.toml
  if (keys === undefined) return []
  return (Array.isArray(keys) ? keys : [keys]).map((key) => (typeof key === 'string' ? { path: key } : key))
}

function fileSchema(source: 'json' | 'toml'): z.ZodType {
  const { document, sections } = SECTIONS[source]
  const shapes: Record<string, Record<string, z.ZodType>> = Object.fromEntries(
    Object.keys(sections).map((name) => [name, {}]),
  )
  const topLevel: Record<string, z.ZodType> = {}
  for (const [id, setting] of ENTRIES) {
    for (const key of sourceKeys(setting, id, source)) {
      const leaf = (key.schema ?? setting.schema)().optional()
      const [section, name] = key.path.split('.')
      if (name === undefined) topLevel[section as string] = leaf
      else {
        const shape = shapes[section as string]
        if (shape === undefined) throw new Error(`settings: ${key.path}: no section ${section} in ${source}`)
        shape[name] = leaf
      }
    }
  }
  const documentShape: Record<string, z.ZodType> = {}
  for (const [name, phrase] of Object.entries(sections)) {
    documentShape[name] = z.strictObject(shapes[name] ?? {}, expect(phrase)).optional()
  }
  return z.strictObject({ ...documentShape, ...topLevel }, expect(document))
}

function flagsSchema(): z.ZodType {
  const shape: Record<string, z.ZodType> = {}
  for (const [id, setting] of ENTRIES) {
    for (const key of sourceKeys(setting, id, 'flags'))
      shape[key.path] = (key.schema ?? setting.schema)().optional()
  }
  // Not strict: ConfigFlags is typed at compile time, and an extra property from the argument parser
  // is a programming slip, not something the user could fix, so it is ignored rather than reported.
  return z.object(shape)
}

/** settings.json. Every key is optional (a partial file is fine). */
export const SettingsJsonSchema = fileSchema('json')
/** config.toml. Every key is optional. */
export const ConfigTomlSchema = fileSchema('toml')
/** CLI flags, keyed by setting id. */
export const FlagsSchema = flagsSchema()

/** What a validated source sets: each setting's first key present, converted to RunConfig's value. */
export function patchOf(source: Source, value: unknown): Patch {
  const patch: Record<string, Record<string, unknown>> = {}
  for (const [id, setting] of ENTRIES) {
    for (const key of sourceKeys(setting, id, source)) {
      const found = valueAtPath(value, key.path)
      if (found === undefined) continue
      const [section, name] = setting.at as ConfigPath
      const converted =
        setting.convert === undefined ? found : (setting.convert as (v: unknown) => unknown)(found)
      patch[section] ??= {}
      ;(patch[section] as Record<string, unknown>)[name] = converted
      break
    }
  }
  // A [pricing] table, even one that sets only max_cost, means prices are given (0 where unset).
  if (source !== 'flags' && valueAtPath(value, 'pricing') !== undefined) patch.pricing ??= {}
  return patch as Patch
}

export function valueAtPath(value: unknown, path: string): unknown {
  let current = value
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<string, unknown>)[part]
  }
  return current
}

/** Where a setting can be given, as messages name it: "llm.base_url, target.base_url or --base-url". */
export function whereToSet(id: SettingId): string {
  const setting: Setting = SETTINGS[id]
  const places = [
    ...sourceKeys(setting, id, 'json').map((key) => key.path),
    ...sourceKeys(setting, id, 'toml').map((key) => key.path),
    ...(setting.flag === undefined ? [] : [`--${setting.flag.name}`]),
    ...(setting.repeatOf === undefined ? [] : [`--${setting.repeatOf} repeated`]),
  ]
  return places.length <= 1 ? places.join('') : `${places.slice(0, -1).join(', ')} or ${places.at(-1)}`
}

/** The raw keys (file paths and the flag's) that could supply a setting, for the final checks. */
export function rawKeysOf(id: SettingId): string[][] {
  const setting: Setting = SETTINGS[id]
  return (['json', 'toml', 'flags'] as const).flatMap((source) =>
    sourceKeys(setting, id, source).map((key) => key.path.split('.')),
  )
}
