import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { startupImports } from '../../src/worker/pool.js'

test("a worker thread gets the process's --import modules: paths as file URLs from the process's folder, names and URLs as given", () => {
  const argv = [
    '--import',
    './test/prebuilt/register.mjs',
    '--import=tsx',
    '--expose-gc',
    '--import',
    '/abs/hooks.mjs',
    '--import=file:///x/loader.mjs',
    '--max-old-space-size=512',
  ]
  assert.deepEqual(startupImports(argv, '/work/repo'), [
    pathToFileURL('/work/repo/test/prebuilt/register.mjs').href,
    'tsx',
    pathToFileURL('/abs/hooks.mjs').href,
    'file:///x/loader.mjs',
  ])
  assert.deepEqual(startupImports(['--expose-gc'], '/'), [])
})
