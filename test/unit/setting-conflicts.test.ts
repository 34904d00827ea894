import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { configConflicts, loadRunConfig } from '../../src/config/load.js'
import { tempDir } from '../helpers/run-config.js'

test('two files disagreeing on a setting, or on the stop rule: which one won is said', () => {
  const dir = tempDir()
  const json = join(dir, 'settings.json')
  const toml = join(dir, 'config.toml')
  writeFileSync(
    json,
    JSON.stringify({
      llm: { base_url: 'http://127.0.0.1:9/v1', model: 'm' },
      bench: { concurrency_levels: [1, 2], requests_per_level: 4, output_tokens: 16 },
    }),
  )
  writeFileSync(toml, '[load]\nlevels = [1]\nduration_per_level = 2\n[workload]\noutput_tokens = 16\n')
  // The order of -c does not matter: config.toml outranks settings.json.
  for (const files of [
    [json, toml],
    [toml, json],
  ]) {
    const config = loadRunConfig({ configFiles: files, flags: {} })
    assert.deepEqual(config.load.levels, [1])
    const notes = configConflicts(config)
    assert.equal(notes.length, 2, notes.join('\n'))
    assert.match(
      notes[0] ?? '',
      /settings\.json sets bench\.concurrency_levels = \[1,2\], .*config\.toml sets load\.levels = \[1\]: .*config\.toml wins/,
    )
    assert.match(
      notes[1] ?? '',
      /end a level differently .*bench\.requests_per_level = 4.*load\.duration_per_level = 2\): .*config\.toml wins, levels end by time/,
    )
    // The same value in both files (output_tokens 16) is no conflict.
    assert.doesNotMatch(notes.join('\n'), /output_tokens/)
  }
  // A flag over both files: the note names the flag and the rule the run used, not the files' winner.
  const flagged = loadRunConfig({ configFiles: [json, toml], flags: { requests: 6, levels: [2] } })
  assert.equal(flagged.load.requests_per_level, 6)
  assert.equal(flagged.load.duration_per_level_s, null)
  const overridden = configConflicts(flagged).join('\n')
  assert.match(overridden, /load\.levels = \[1\]: --levels overrides both/)
  assert.match(
    overridden,
    /end a level differently .*: --requests overrides both, levels end by request count/,
  )
  assert.doesNotMatch(overridden, /wins/)
  const alone = loadRunConfig({ configFiles: [json], flags: {} })
  assert.deepEqual(configConflicts(alone), [])
})
