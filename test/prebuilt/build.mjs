// Transpiles src/, test/ and bench/ for the suite, ahead of time, into .test-build/ (the same
// per-file transform tsx makes on the fly, by the same esbuild). test/run.sh runs the test files
// through hooks.mjs, which serves this output for each .ts module: a test process then skips tsx's
// loader (about 0.3-0.5 s of CPU per test file, some 200 files per suite on a 2-core machine).
// Types are not checked here: tsc checks them beside the suite, as before.
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../../', import.meta.url))
const outdir = `${root}.test-build`
rmSync(outdir, { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
  outdir,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.test.json',
  bundle: false,
  logLevel: 'warning',
})
