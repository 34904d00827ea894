/**
 * The package as a user gets it: `npm pack`, a global install of the tarball into a temporary prefix
 * (production dependencies only, as any install from a tarball), then the installed `llmbench`
 * runs `--version` and a short `demo`. Fails on any npm warning (EBADENGINE, install scripts...)
 * or any Node warning, and prints the footprint of the installed dependencies, largest first.
 *
 * A script rather than a test: it downloads the dependencies from the registry (or the npm cache)
 * and takes 20-60 s. Exits 0 when clean, 1 on a warning or failure, 2 when npm cannot install.
 *
 * Run: npm run check:install   (KEEP=1 keeps the temporary prefix and prints where it is)
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string
  version: string
}
/** Lines npm or node print when something is off; `npm notice` (the pack listing) is not one. */
const WARNING = /\bnpm (warn|WARN|ERR!|error)\b|EBADENGINE|\(node:\d+\) \w*Warning|ExperimentalWarning/

function step(label: string, command: string, args: string[], cwd: string): string {
  const run = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000 })
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`
  const warnings = output.split('\n').filter((line) => WARNING.test(line))
  console.log(`${run.status === 0 && warnings.length === 0 ? 'ok  ' : 'FAIL'} ${label}`)
  if (run.status !== 0 || warnings.length > 0) {
    console.log(output.replace(/^/gm, '     | '))
    throw new StepFailed(label, run.status)
  }
  return output
}

class StepFailed extends Error {
  constructor(
    readonly label: string,
    readonly status: number | null,
  ) {
    super(label)
  }
}

/** Disk use of a folder in bytes (files' sizes; no hard-link accounting needed here). */
function bytesUnder(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.size
  return readdirSync(path).reduce((sum, entry) => sum + bytesUnder(join(path, entry)), 0)
}

function footprint(modules: string): void {
  const packages = readdirSync(modules).flatMap((entry) =>
    entry.startsWith('@') ? readdirSync(join(modules, entry)).map((sub) => `${entry}/${sub}`) : [entry],
  )
  const sizes = packages
    .filter((p) => !p.startsWith('.'))
    .map((p) => ({ name: p, bytes: bytesUnder(join(modules, p)) }))
    .sort((a, b) => b.bytes - a.bytes)
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0)
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1).padStart(6)
  console.log(`\nproduction dependencies: ${sizes.length} packages, ${mb(total).trim()} MB; the largest:`)
  for (const s of sizes.slice(0, 8)) console.log(`  ${mb(s.bytes)} MB  ${s.name}`)
}

function main(): number {
  const work = mkdtempSync(join(tmpdir(), 'llmbench-install-'))
  const prefix = join(work, 'prefix')
  try {
    step('npm pack (prepack builds dist/)', 'npm', ['pack', '--pack-destination', work], ROOT)
    const tarball = join(work, `${name}-${version}.tgz`)
    try {
      step(
        `npm install -g --prefix <tmp> ${name}-${version}.tgz`,
        'npm',
        ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball],
        work,
      )
    } catch (error) {
      if (error instanceof StepFailed && error.status !== 0) {
        console.log('could not install (no registry and no npm cache?): nothing checked')
        return 2
      }
      throw error
    }
    const bin = join(prefix, 'bin', 'llmbench')
    const shown = step('llmbench --version', bin, ['--version'], work).trim()
    if (shown !== version)
      throw new StepFailed(`--version printed "${shown}", package.json says ${version}`, 1)
    step(
      'llmbench demo --levels 1,2 --requests 4',
      bin,
      ['demo', '--levels', '1,2', '--requests', '4', '--out', join(work, 'demo'), '--quiet'],
      work,
    )
    const demoFiles = readdirSync(join(work, 'demo'))
    if (!demoFiles.includes('report.html')) throw new StepFailed(`demo wrote no report.html: ${demoFiles}`, 1)
    footprint(join(prefix, 'lib', 'node_modules', name, 'node_modules'))
    console.log(
      `\ninstalled size: ${execFileSync('du', ['-sh', join(prefix, 'lib', 'node_modules')], { encoding: 'utf8' }).split('\t')[0]}`,
    )
    return 0
  } catch (error) {
    if (error instanceof StepFailed) return 1
    throw error
  } finally {
    if (process.env.KEEP === '1') console.log(`kept: ${work}`)
    else rmSync(work, { recursive: true, force: true })
  }
}

process.exitCode = main()
