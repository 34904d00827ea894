import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RUN_SPEC } from '../../src/cli/commands/run.js'
import { DEFAULTS, loadRunConfig } from '../../src/config/load.js'
import { defaultShown } from '../../src/config/setting-defaults.js'
import { SETTINGS, type Setting } from '../../src/config/settings.js'

const ENTRIES = Object.entries(SETTINGS) as [string, Setting][]
/** Derived from `input`/`output` by the loader, not set by any source. */
const DERIVED = new Set(['workload.input_tokens', 'workload.output_tokens'])

test('every RunConfig value is set by exactly one setting of the table', () => {
  const owners = new Map<string, string[]>()
  for (const [id, setting] of ENTRIES) {
    const path = setting.at.join('.')
    owners.set(path, [...(owners.get(path) ?? []), id])
  }
  const prices = { input_per_mtok: 0, output_per_mtok: 0, currency: '' }
  const config = { ...DEFAULTS, pricing: prices } as Record<string, Record<string, unknown>>
  const leaves = Object.entries(config).flatMap(([section, values]) =>
    Object.keys(values).map((key) => `${section}.${key}`),
  )
  for (const leaf of leaves.filter((path) => !DERIVED.has(path)))
    assert.equal(
      owners.get(leaf)?.length,
      1,
      `${leaf}: set by ${owners.get(leaf)?.join(', ') ?? 'no setting'}`,
    )
  for (const path of owners.keys()) assert.ok(leaves.includes(path), `${path}: not in RunConfig`)
})

test("--help shows each flag's default as DEFAULTS holds it", () => {
  for (const [, setting] of ENTRIES) {
    if (setting.flag === undefined) continue
    const spec = RUN_SPEC.flags.find((flag) => flag.name === setting.flag?.name)
    assert.ok(spec !== undefined, `--${setting.flag.name} is a flag of run`)
    assert.equal(spec.default, defaultShown(setting), `--${setting.flag.name}`)
  }
  const requests = RUN_SPEC.flags.find((flag) => flag.name === 'requests')
  assert.equal(requests?.default, String(DEFAULTS.load.requests_per_level))
})

test('a flag lands where its setting says, converted as the files would be', () => {
  const config = loadRunConfig({
    configFiles: [],
    flags: {
      base_url: 'http://h/v1/',
      model: 'm',
      mode: 'rate',
      connect_timeout: 3,
      input_tokens: 'normal(100, 10)',
      calibrate: false,
      workers: 'auto',
    },
  })
  assert.equal(config.target.base_url, 'http://h/v1', 'trailing slash trimmed')
  assert.equal(config.load.mode, 'request_rate')
  assert.equal(config.client.connect_timeout_s, 3)
  assert.deepEqual(config.workload.input, { kind: 'normal', mean: 100, sd: 10 })
  assert.equal(config.workload.calibrate, false)
})
