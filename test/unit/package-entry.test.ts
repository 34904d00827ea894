import assert from 'node:assert/strict'
import { test } from 'node:test'

test('the package entry (package.json main/exports, the built dist/index.js) loads and exposes the library', async () => {
  // Self-reference through the package's own "exports": what `import 'llmbench-cli'` gives a user (the npm name; the command stays `llmbench`).
  const llmbench = await import('llmbench-cli')
  for (const name of [
    'runGradient',
    'loadRunConfig',
    'buildResult',
    'compareRuns',
    'startSimulator',
    'readRecords',
    'SseParser',
  ]) {
    assert.equal(typeof (llmbench as Record<string, unknown>)[name], 'function', name)
  }
  assert.equal(llmbench.RESULT_SCHEMA, 'llmbench.result/2')
})
