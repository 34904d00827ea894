import { formatLength, type LengthSpec } from '../workload/lengths.js'
import { DEFAULTS } from './load.js'
import type { Setting } from './settings.js'

/** A setting's value in DEFAULTS, through its path (undefined for pricing, which has no defaults). */
export function defaultOf(setting: Setting): unknown {
  const [section, key] = setting.at
  return (DEFAULTS[section] as Record<string, unknown> | null)?.[key]
}

/**
 * A setting's default as a person reads it ("120", "1,4,8", "normal(512, 64)"), read from DEFAULTS
 * through the setting's path, so --help, init's notes and the template comments cannot drift from it;
 * undefined when there is none to state (unset, empty, or a switch).
 */
export function defaultShown(setting: Setting): string | undefined {
  if (setting.flag?.shownDefault !== undefined) return setting.flag.shownDefault
  if (setting.flag?.kind === 'switch' || setting.flag?.kind === 'negated') return undefined
  const value = defaultOf(setting)
  if (value === null || value === undefined || value === '') return undefined
  if (Array.isArray(value)) return value.join(',')
  if (typeof value === 'object') return isLength(value) ? formatLength(value) : undefined
  return String(value)
}

/** What a file key does and its default: "whole-request timeout, seconds (default 120)". */
export function describeSetting(setting: Setting): string {
  const doc = setting.doc ?? setting.flag?.help ?? ''
  if (setting.required === true) return `${doc} (no default: required)`
  const shown = fileDefault(setting)
  return shown === undefined ? doc : `${doc} (default ${shown})`
}

/** In a file a list reads as a list, and a switch's default is its value. */
function fileDefault(setting: Setting): string | undefined {
  const value = defaultOf(setting)
  if (Array.isArray(value)) return `[${value.join(', ')}]`
  if (typeof value === 'boolean') return String(value)
  return defaultShown(setting)
}

function isLength(value: object): value is LengthSpec {
  return 'kind' in value
}
