/**
 * docs/ is the contract users and scripts rely on (docs/README.md): these tests fail when a flag, a
 * configuration key or an exit code exists in the code but not in the docs, when a documented
 * default drifts from the one --help prints, or when a comment cites a document or section that
 * does not exist.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { CommandSpec } from '../../src/cli/args.js'
import { CHECK_SPEC, MODELS_SPEC } from '../../src/cli/commands/check.js'
import { COMPARE_SPEC } from '../../src/cli/commands/compare.js'
import { COORDINATE_SPEC } from '../../src/cli/commands/coordinate.js'
import { DEMO_SPEC } from '../../src/cli/commands/demo.js'
import { COMMANDS_HELP } from '../../src/cli/commands/help.js'
import { INIT_SPEC } from '../../src/cli/commands/init.js'
import { K8S_MANIFEST_SPEC } from '../../src/cli/commands/k8s-manifest.js'
import { MERGE_SPEC } from '../../src/cli/commands/merge.js'
import { MODEL_SPEC } from '../../src/cli/commands/model.js'
import { PREDICT_SPEC } from '../../src/cli/commands/predict.js'
import { REPORT_SPEC } from '../../src/cli/commands/report.js'
import { RUN_SPEC } from '../../src/cli/commands/run.js'
import { SIM_SPEC } from '../../src/cli/commands/sim.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { ConfigTomlSchema, SettingsJsonSchema } from '../../src/config/source-schemas.js'
import { LEVEL_FIGURES } from '../../src/metrics/figure-catalogue.js'
import { MEASURES, type Measure } from '../../src/metrics/measures.js'
import { DEFINITIONS } from '../../src/result/definitions.js'
import { TOOL_VERSION } from '../../src/version.js'
import { z } from '../../src/zod.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const doc = (name: string): string => readFileSync(join(ROOT, 'docs', name), 'utf8')

const SPECS: CommandSpec[] = [
  RUN_SPEC,
  DEMO_SPEC,
  SIM_SPEC,
  REPORT_SPEC,
  COMPARE_SPEC,
  MERGE_SPEC,
  COORDINATE_SPEC,
  MODEL_SPEC,
  PREDICT_SPEC,
  K8S_MANIFEST_SPEC,
  CHECK_SPEC,
  MODELS_SPEC,
  INIT_SPEC,
]

/** commands.md cut at its "## `llmbench NAME`" headings: command name → that section's text. */
function commandSections(text: string): Map<string, string> {
  const sections = new Map<string, string>()
  const parts = text.split(/^## `llmbench ([a-z0-9-]+)`$/m)
  for (let i = 1; i < parts.length; i += 2) sections.set(parts[i] as string, parts[i + 1] ?? '')
  return sections
}

/** `--warmup` must not be found inside `--warmup-seconds`. */
const flagPattern = (name: string): RegExp => new RegExp(`--${name}(?![\\w-])`)

/** A table row as text: backticks dropped, escaped pipes restored, spaces collapsed. */
const plain = (line: string): string => line.replaceAll('`', '').replaceAll('\\|', '|').replace(/\s+/g, ' ')

test('every command the CLI lists has a section in docs/commands.md, and every section a command', () => {
  const listed = [...COMMANDS_HELP.matchAll(/^ {2}([a-z0-9-]+) {2,}/gm)].map((match) => match[1])
  assert.ok(listed.length >= 10, `commands parsed from the help: ${listed.join(', ')}`)
  const sections = commandSections(doc('commands.md'))
  assert.deepEqual([...sections.keys()].sort(), [...listed].sort())
  assert.deepEqual(SPECS.map((spec) => spec.name).sort(), [...listed].sort(), 'a flag spec per command')
})

test('every flag of every command is in its docs/commands.md section, with the default --help prints', () => {
  const sections = commandSections(doc('commands.md'))
  const problems: string[] = []
  for (const spec of SPECS) {
    const section = sections.get(spec.name) ?? ''
    for (const flag of spec.flags) {
      const pattern = flagPattern(flag.name)
      if (!pattern.test(section)) {
        problems.push(`${spec.name}: --${flag.name} is not documented`)
        continue
      }
      if (flag.short !== undefined && !section.includes(`-${flag.short}\``))
        problems.push(`${spec.name}: -${flag.short} (short for --${flag.name}) is not documented`)
      // Where the flag has a table row of its own, that row states the default.
      const row = section
        .split('\n')
        .find((line) => line.startsWith('|') && pattern.test(line.split(' | ')[0] ?? ''))
      const expected = flag.default?.replaceAll(TOOL_VERSION, '<version>')
      if (row !== undefined && expected !== undefined && !plain(row).includes(expected))
        problems.push(
          `${spec.name}: --${flag.name}: the row does not say the default ${JSON.stringify(expected)}`,
        )
    }
  }
  assert.deepEqual(problems, [])
})

/** Dotted paths of every key a file schema accepts: "llm.base_url", "slo", ... */
function keyPaths(schema: z.ZodType, prefix = ''): string[] {
  let inner: unknown = schema
  while (inner instanceof z.ZodOptional) inner = inner.unwrap()
  if (!(inner instanceof z.ZodObject)) return [prefix]
  const shape = inner.shape as Record<string, z.ZodType>
  return Object.entries(shape).flatMap(([key, child]) =>
    keyPaths(child, prefix === '' ? key : `${prefix}.${key}`),
  )
}

test('every key of settings.json and config.toml is in docs/configuration.md', () => {
  const text = doc('configuration.md')
  const settings = keyPaths(SettingsJsonSchema)
  const toml = keyPaths(ConfigTomlSchema)
  assert.ok(settings.includes('llm.base_url') && toml.includes('client.timeout'), 'the schemas were walked')
  const missing = [...settings, ...toml].filter((path) => !text.includes(`\`${path}\``))
  assert.deepEqual(missing, [])
})

test('docs/exit-codes.md has one row per code of EXIT, with its name, and no other', () => {
  const rows = [...doc('exit-codes.md').matchAll(/^\| `(\d+)` \| `(\w+)` \|/gm)].map(
    (match) => `${match[1]} ${match[2]}`,
  )
  const codes = Object.entries(EXIT).map(([name, code]) => `${code} ${name}`)
  assert.deepEqual(rows.sort(), codes.sort())
})

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file))
}

test('comments cite docs that exist (file and quoted section), and none cites SPEC.md', () => {
  const headings = new Map<string, string[]>()
  for (const name of readdirSync(join(ROOT, 'docs'))) {
    const titles = [...doc(name).matchAll(/^#+ (.+)$/gm)].map((match) => plain(match[1] as string))
    headings.set(name, titles)
  }
  const problems: string[] = []
  let citations = 0
  const self = join('test', 'unit', 'docs-contract.test.ts')
  for (const file of ['src', 'test', 'bench'].flatMap(sourceFiles).filter((f) => f !== self)) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    if (/\bSPEC(?:\.md|'s| "|:)/.test(text)) problems.push(`${file}: cites SPEC`)
    for (const match of text.matchAll(/docs\/([A-Za-z-]+\.md)(?: "([^"]+)")?/g)) {
      citations++
      const [, name = '', section] = match
      const titles = headings.get(name)
      if (titles === undefined) problems.push(`${file}: docs/${name} does not exist`)
      else if (section !== undefined && !titles.some((title) => title.includes(section)))
        problems.push(`${file}: docs/${name} has no section "${section}"`)
    }
  }
  assert.ok(citations >= 10, `citations found: ${citations}`)
  assert.deepEqual(problems, [])
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

test('every relative link of README.md and docs/ resolves (file and #section), and docs/README.md indexes every page', () => {
  const pages = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'))
  const documents = ['README.md', ...pages.map((name) => join('docs', name))]
  const problems: string[] = []
  let links = 0
  for (const document of documents) {
    // Links inside code blocks are examples, not links.
    const text = readFileSync(join(ROOT, document), 'utf8').replace(/^```[\s\S]*?^```/gm, '')
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] as string
      if (/^[a-z]+:/.test(target)) continue
      links++
      const [path = '', anchor] = target.split('#')
      const file = path === '' ? join(ROOT, document) : join(ROOT, dirname(document), path)
      if (!existsSync(file)) {
        problems.push(`${document}: ${target}: no such file`)
        continue
      }
      if (anchor === undefined || !file.endsWith('.md')) continue
      const anchors = [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) =>
        anchorOf(m[1] as string),
      )
      if (!anchors.includes(anchor)) problems.push(`${document}: ${target}: no heading with that anchor`)
    }
  }
  assert.ok(links >= 20, `links found: ${links}`)
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const index = doc('README.md')
  for (const page of pages.filter((name) => name !== 'README.md')) {
    if (!index.includes(`](${page})`)) problems.push(`docs/README.md does not link ${page}`)
    if (!readme.includes(`](docs/${page}`)) problems.push(`README.md does not link docs/${page}`)
  }
  assert.deepEqual(problems, [])
})

/** The field names a table row documents: the backticked names of its first cell. */
function documentedFields(section: string): string[] {
  const fields: string[] = []
  for (const line of section.split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1]
    if (first === undefined || first === 'field' || first.startsWith('---')) continue
    for (const match of first.matchAll(/`([a-z0-9_]+)`/g)) fields.push(match[1] as string)
  }
  return fields
}

test('every level figure of the catalogue is in docs/results.md, and every documented level field in the catalogue', () => {
  const text = doc('results.md')
  const start = text.indexOf('### `levels[]`')
  const section = text.slice(start, text.indexOf('\n## ', start))
  const documented = documentedFields(section)
  assert.ok(documented.length >= 30, `level fields found in docs/results.md: ${documented.length}`)
  const declared = LEVEL_FIGURES.flatMap((figure) => Object.keys(figure.fields))
  assert.deepEqual(
    declared.filter((key) => !documented.includes(key)),
    [],
    'catalogue fields missing from the levels[] table',
  )
  assert.deepEqual(
    documented.filter((key) => !declared.includes(key)),
    [],
    'documented level fields the catalogue does not declare',
  )
})

test('every definition a result carries has text, and each level figure with one is in the catalogue', () => {
  for (const [key, text] of Object.entries(DEFINITIONS)) assert.ok(text.length > 20, `${key}: ${text}`)
  const declared = new Set(
    LEVEL_FIGURES.flatMap((figure) => [
      ...Object.keys(figure.fields),
      ...Object.keys(figure.definitions ?? {}),
    ]),
  )
  const run = Object.keys(DEFINITIONS).filter((key) => !declared.has(key))
  assert.deepEqual(
    run.sort(),
    ['knee_cause', 'percentiles', 'timestamps'],
    'definitions declared outside the catalogue',
  )
})

/** Every key of a JSON value, objects' and their arrays' elements', at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, child]) => [key, ...keysOf(child)])
}

test('every key of a result’s capacity model is in the `model` section of docs/results.md', () => {
  const text = doc('results.md')
  const start = text.indexOf('### `model`')
  assert.ok(start >= 0, 'docs/results.md has a `model` section')
  const documented = documentedFields(text.slice(start, text.indexOf('\n### ', start + 1)))
  // A stored result whose server said its context (so the KV cache is fitted) and whose levels were reproduced.
  const stored = JSON.parse(
    readFileSync(join(ROOT, 'test/fixtures/rendered/llama/expected/bench_result.json'), 'utf8'),
  ) as { model?: unknown }
  const keys = [...new Set(keysOf(stored.model))]
  assert.ok(keys.includes('kv_cache_tokens') && keys.includes('predicted_tokens_per_s'), keys.join(', '))
  assert.deepEqual(
    keys.filter((key) => !documented.includes(key)),
    [],
    'model keys missing from the docs',
  )
  assert.match(text, /^\| `model` \|/m, 'the top-level table lists `model`')
})

test('the measures table of docs/figures.md is the catalogue of measures, row by row', () => {
  const text = doc('figures.md')
  const start = text.indexOf('## The measures')
  assert.ok(start >= 0, 'docs/figures.md has a section on the measures')
  const rows = text
    .slice(start, text.indexOf('\n## ', start + 1))
    .split('\n')
    .filter((line) => line.startsWith('| `'))
  const cell = (text: string): string => (text === '' ? '–' : text)
  const expected = MEASURES.map(
    (m: Measure) =>
      `| ${[
        `\`${m.key}\``,
        m.name,
        m.unit,
        m.better,
        m.slo ? `\`${m.key}_p95\`` : '',
        m.precision ? `\`${m.key}_p95\`` : '',
        m.compare ? `\`${m.key}_p95\`` : '',
        m.gate === null ? '' : `+${m.gate * 100}% at p50, p95, p99`,
        m.floor === null ? '' : `${m.floor} ${m.unit}`,
      ]
        .map(cell)
        .join(' | ')} |`,
  )
  assert.deepEqual(rows, expected)
})
