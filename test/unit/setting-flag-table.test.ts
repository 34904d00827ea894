import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { SETTING_FLAG_TABLE } from '../../src/cli/setting-flag-table.js'
import { settingFlags } from '../../src/cli/setting-flags.js'

/**
 * --help reads its setting flags from a table written out ahead (src/cli/setting-flag-table.ts), so
 * that it loads neither the settings table nor zod. This holds it to what the settings table
 * derives; after changing a setting's flag or default, write it anew (then format it):
 *   WRITE_FLAG_TABLE=1 node --import tsx --test test/unit/setting-flag-table.test.ts
 *   npx biome check --write src/cli/setting-flag-table.ts
 */
const TABLE = new URL('../../src/cli/setting-flag-table.ts', import.meta.url)

test('the flag table --help reads is the one the settings table derives', () => {
  const derived = { target: settingFlags('target'), load: settingFlags('load') }
  if (process.env.WRITE_FLAG_TABLE === '1') {
    const source = readFileSync(TABLE, 'utf8')
    const head = source.slice(0, source.indexOf('export const SETTING_FLAG_TABLE'))
    writeFileSync(
      TABLE,
      `${head}export const SETTING_FLAG_TABLE: Record<'target' | 'load', readonly FlagSpec[]> = ${JSON.stringify(derived, null, 2)}\n`,
    )
    return // the table imported above is the one just replaced: the next run checks the new one
  }
  assert.deepEqual(
    SETTING_FLAG_TABLE,
    derived,
    'stale: WRITE_FLAG_TABLE=1 node --import tsx --test test/unit/setting-flag-table.test.ts',
  )
})
