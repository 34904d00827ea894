/**
 * Skeletons written by `llmbench init`: the two files of docs/configuration.md, with placeholder values
 * that load cleanly as they are (a test loads both). Replace base_url and model before a real run. The
 * descriptions and defaults come from the settings table and DEFAULTS; only the choice of keys and the
 * example values are made here.
 */
import { defaultOf, describeSetting } from './setting-defaults.js'
import { SETTINGS, type Setting, type SettingId } from './settings.js'

/** The example value of a key: `USE_DEFAULT` writes the default itself. */
const USE_DEFAULT = Symbol('default')
type Example = typeof USE_DEFAULT | string | number | boolean | number[]

interface TemplateKey {
  id: SettingId
  example?: Example
  /** Written as a comment: shown, not set. */
  commented?: boolean
  /** The key in this file when the setting has several (e.g. [load] max_tokens). */
  path?: string
}

function setting(id: SettingId): Setting {
  return SETTINGS[id]
}

/** The default in a file's own terms: a fixed length is its count. */
function defaultValue(id: SettingId): string | number | boolean | number[] {
  const value = defaultOf(setting(id))
  if (typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'fixed')
    return (value as unknown as { value: number }).value
  if (value === null || value === undefined) throw new Error(`templates: ${id} has no default to write`)
  return value as string | number | boolean | number[]
}

function exampleOf({ id, example = USE_DEFAULT }: TemplateKey): string | number | boolean | number[] {
  return example === USE_DEFAULT ? defaultValue(id) : example
}

/** The one key a file gives the setting, or the one asked for (checked against the table). */
function keyIn(file: 'json' | 'toml', { id, path }: TemplateKey): string {
  const declared = setting(id)[file]
  const paths = (Array.isArray(declared) ? declared : declared === undefined ? [] : [declared]).map((key) =>
    typeof key === 'string' ? key : key.path,
  )
  const chosen = path ?? paths[0]
  if (chosen === undefined || !paths.includes(chosen))
    throw new Error(`templates: ${id} has no ${file} key ${chosen ?? ''}`)
  return chosen
}

// ---------------------------------------------------------------------------------------------------
// settings.json
// ---------------------------------------------------------------------------------------------------

const JSON_KEYS: TemplateKey[] = [
  { id: 'base_url', example: 'http://127.0.0.1:8000/v1' },
  { id: 'api_key_env' },
  { id: 'model', example: 'your-model-id' },
  { id: 'timeout' },
  { id: 'stream' },
  { id: 'levels' },
  { id: 'requests' },
  { id: 'warmup' },
  { id: 'input_tokens' },
  { id: 'output_tokens' },
  { id: 'percentiles' },
]

/** Keys the notes explain although the template leaves them out. */
const JSON_OPTIONAL: SettingId[] = ['keepalive', 'endpoint', 'duration', 'slo']

function settingsJson(): string {
  const sections = new Map<string, string[]>()
  for (const key of JSON_KEYS) {
    const [section = '', name = ''] = keyIn('json', key).split('.')
    const lines = sections.get(section) ?? []
    lines.push(`    ${JSON.stringify(name)}: ${JSON.stringify(exampleOf(key)).replaceAll(',', ', ')}`)
    sections.set(section, lines)
  }
  const body = [...sections].map(([name, lines]) => `  ${JSON.stringify(name)}: {\n${lines.join(',\n')}\n  }`)
  return `{\n${body.join(',\n')}\n}\n`
}

/** settings.json. Plain JSON, so any tool reads it; INIT_NOTES, printed by `init`, explains each key. */
export const SETTINGS_JSON_TEMPLATE = settingsJson()

/** Printed by `init` next to settings.json, one line per key. */
export const INIT_NOTES = [
  'settings.json keys (all optional; config.toml and flags override them; // comments are allowed):',
  ...[...JSON_KEYS, ...JSON_OPTIONAL.map((id) => ({ id }))].map(
    (key) => `  ${keyIn('json', key).padEnd(26)}${describeSetting(setting(key.id))}`,
  ),
].join('\n')

// ---------------------------------------------------------------------------------------------------
// config.toml
// ---------------------------------------------------------------------------------------------------

const TOML_SECTIONS: { table: string; commented?: boolean; keys: TemplateKey[] }[] = [
  {
    table: 'target',
    keys: [
      { id: 'base_url', example: 'http://127.0.0.1:8000/v1' },
      { id: 'endpoint' },
      { id: 'model', example: 'your-model-id' },
      { id: 'api_key_env', commented: true },
    ],
  },
  {
    table: 'load',
    keys: [
      { id: 'mode', example: 'concurrency_gradient' },
      { id: 'levels' },
      { id: 'duration', example: 30 },
      { id: 'requests', commented: true },
      { id: 'output_tokens', path: 'load.max_tokens' },
      { id: 'warmup', commented: true },
      { id: 'input_tokens', path: 'load.input_tokens', commented: true },
      { id: 'rates', commented: true },
      { id: 'arrival', commented: true },
      { id: 'warmup_seconds', commented: true },
      { id: 'cooldown_seconds', commented: true },
    ],
  },
  {
    table: 'workload',
    commented: true,
    keys: [
      { id: 'profile', example: 'chat' },
      { id: 'input_tokens', example: 'normal(512, 64)' },
      { id: 'output_tokens' },
      { id: 'dataset', example: 'prompts.jsonl' },
      { id: 'tokenizer' },
      { id: 'ignore_eos' },
    ],
  },
  {
    table: 'metrics',
    keys: [
      { id: 'record_ttft' },
      { id: 'record_tpot' },
      { id: 'record_throughput' },
      { id: 'output_json' },
      { id: 'percentiles', commented: true },
      { id: 'min_success_rate', commented: true },
    ],
  },
  {
    table: 'client',
    keys: [
      { id: 'stream' },
      { id: 'timeout' },
      { id: 'retry' },
      { id: 'workers', commented: true },
      { id: 'connect_timeout', commented: true },
      { id: 'first_token_timeout', example: 60, commented: true },
      { id: 'idle_timeout', commented: true },
      { id: 'keepalive', commented: true },
    ],
  },
  {
    table: 'pricing',
    commented: true,
    keys: [
      { id: 'input_per_mtok', example: 3 },
      { id: 'output_per_mtok', example: 15 },
      { id: 'currency', example: 'USD' },
      { id: 'max_cost', example: 5 },
    ],
  },
]

function tomlValue(value: string | number | boolean | number[]): string {
  return Array.isArray(value) ? `[${value.join(', ')}]` : JSON.stringify(value)
}

function configToml(): string {
  const lines = [
    '# llmbench config. Every key is optional; flags override this file, and it overrides settings.json.',
  ]
  for (const { table, commented = false, keys } of TOML_SECTIONS) {
    lines.push('', `${commented ? '# ' : ''}[${table}]`)
    for (const key of keys) {
      const name = keyIn('toml', key).split('.')[1] ?? ''
      const assignment = `${commented || key.commented === true ? '# ' : ''}${name} = ${tomlValue(exampleOf(key))}`
      lines.push(`${assignment.padEnd(39)} # ${describeSetting(setting(key.id))}`)
    }
  }
  lines.push(
    '',
    '# [slo]                                 # objectives: per level, goodput and whether it meets them',
    '# ttft_p95 = 800                        # metric ttft, tpot, e2e (reasoning: ttfr, ttfo, answer_tpot); any percentile; ms',
    '# tpot_p95 = 50',
  )
  return `${lines.join('\n')}\n`
}

/** config.toml, commented line by line (what each key does, its default). */
export const CONFIG_TOML_TEMPLATE = configToml()
