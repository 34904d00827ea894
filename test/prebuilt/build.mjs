// Transpiles src/, test/ and bench/ for the suite, ahead of time, into .test-build/ (the same
// per-file transform tsx makes on the fly, by the same esbuild). test/run.sh runs the test files
// through hooks.mjs, which serves this output for each .ts module: a test process then skips tsx's
// loader (about 0.3-0.5 s of CPU per test file, some 200 files per suite on a 2-core machine).
//
// It also writes dist/'s JavaScript (with `--dist`), which the CLI tests run: the same per-file
// transform tsc makes of this code (tsconfig.json's verbatimModuleSyntax keeps every file
// transpilable alone, and esbuild reads the tsconfig's target and class-field semantics), in about a
// second against tsc's 15-30. tsc then checks the types and writes the declarations beside the suite
// (test/run.sh: --emitDeclarationOnly), so the lanes start without waiting for it.
// Types are not checked here.
import { readdirSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../../', import.meta.url))
const outdir = `${root}.test-build`
rmSync(outdir, { recursive: true, force: true })
const common = {
  absWorkingDir: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  bundle: false,
  logLevel: 'warning',
}
await Promise.all([
  build({
    ...common,
    entryPoints: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    outdir,
    outbase: '.',
    tsconfig: 'tsconfig.test.json',
  }),
  process.argv.includes('--dist')
    ? build({
        ...common,
        // A declaration file (src/**/*.d.ts) has no JavaScript: tsc writes none for it.
        entryPoints: readdirSync(`${root}src`, { recursive: true })
          .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
          .map((file) => `src/${file}`),
        outdir: `${root}dist`,
        outbase: 'src',
        tsconfig: 'tsconfig.json',
        sourcemap: true,
      })
    : undefined,
])
