/**
 * The flags of every setting that has one, derived from the settings table: their --help lines (the
 * default read from DEFAULTS) and the parsed flags turned into ConfigFlags for the config loader.
 */
import { defaultShown } from '../config/setting-defaults.js'
import { type ConfigFlags, type FlagDecl, SETTINGS, type Setting } from '../config/settings.js'
import { precisionPairs } from '../metrics/precision-key.js'
import { type FlagSpec, numberFlag, numberList, type ParsedFlags, stringFlag } from './args.js'

const FLAGGED = (Object.entries(SETTINGS) as [string, Setting][]).filter(
  (entry): entry is [string, Setting & { flag: FlagDecl }] => entry[1].flag !== undefined,
)

/** The flags of one group, in the table's order. */
export function settingFlags(group: FlagDecl['group']): FlagSpec[] {
  return FLAGGED.filter(([, setting]) => setting.flag.group === group).map(([, setting]) => {
    const { flag } = setting
    const shown = defaultShown(setting)
    return {
      name: flag.name,
      type: flag.kind === 'switch' || flag.kind === 'negated' ? 'boolean' : 'string',
      ...(flag.kind === 'strings' || flag.rest !== undefined ? { multiple: true } : {}),
      ...(flag.value === undefined ? {} : { value: flag.value }),
      help: flag.help,
      ...(shown === undefined ? {} : { default: shown }),
    }
  })
}

/** Flags as config overrides; values are validated by the config loader, which names the flag. */
export function configFlags(flags: ParsedFlags): ConfigFlags {
  const result: Record<string, unknown> = {}
  for (const [id, { flag }] of FLAGGED) {
    const repeated = flags[flag.name]
    if (flag.rest !== undefined && Array.isArray(repeated)) {
      // --base-url A --base-url B: the first is the setting's, the others its list's.
      const [first, ...rest] = repeated as string[]
      if (first !== undefined) result[id] = first
      if (rest.length > 0) result[flag.rest] = rest
      continue
    }
    const value = flagValue(flags, flag)
    if (value !== undefined) result[id] = value
  }
  return result as ConfigFlags
}

function flagValue(flags: ParsedFlags, { name, kind }: FlagDecl): unknown {
  switch (kind) {
    case 'switch':
      return flags[name] === true ? true : undefined
    case 'negated':
      return flags[name] === true ? false : undefined
    case 'number':
      return numberFlag(flags, name)
    case 'string':
      return stringFlag(flags, name)
    case 'strings': {
      const values = flags[name]
      return Array.isArray(values) && values.length > 0 ? values : undefined
    }
    case 'list': {
      const text = stringFlag(flags, name)
      return text === undefined ? undefined : numberList(text)
    }
    case 'length': {
      // A plain number stays a number (so "-5" is reported as a bad count), else the text.
      const text = stringFlag(flags, name)
      if (text === undefined) return undefined
      return /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text
    }
    case 'workers': {
      const text = stringFlag(flags, name)
      return text === undefined || text === 'auto' ? text : numberFlag(flags, name)
    }
    case 'precision': {
      const text = stringFlag(flags, name)
      return text === undefined ? undefined : precisionPairs(text)
    }
    case 'slo': {
      const text = stringFlag(flags, name)
      return text === undefined ? undefined : sloPairs(text)
    }
  }
}

/** "ttft_p95=800,e2e_p99=5000" → { ttft_p95: 800, ... } (the older ttft_p95_ms is read too); a bad pair stays NaN so validation names it. */
export function sloPairs(text: string): Record<string, number> {
  const pairs: Record<string, number> = {}
  for (const pair of text.split(',')) {
    const [key = '', value = ''] = pair.split('=')
    pairs[key.trim()] = value.trim() === '' ? Number.NaN : Number(value)
  }
  return pairs
}
