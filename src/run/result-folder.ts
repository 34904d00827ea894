import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { RECORDS_FILE, runFiles } from '../result/folder-layout.js'

/** `run --out DIR` where DIR holds a run, without --force. */
export class FolderInUseError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FolderInUseError'
  }
}

/** `run --out DIR` where DIR cannot be created or written. */
export class FolderUnwritableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FolderUnwritableError'
  }
}

/**
 * The folder can be made and written, found out by writing a probe file into it or, when it does not
 * exist yet, into its nearest existing parent (a run that stops at a later usage error leaves no
 * folder behind). Permission bits say nothing to root; a read-only file system or a path below a
 * regular file shows only on the write. Before any request is sent, so a run never bills tokens it
 * cannot record.
 */
function ensureWritable(dir: string): void {
  let existing = resolve(dir)
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing)
  const probe = join(existing, `.llmbench-write-check-${process.pid}`)
  try {
    if (!statSync(existing).isDirectory()) {
      const error = new Error(`not a directory: ${existing}`) as NodeJS.ErrnoException
      error.code = 'ENOTDIR'
      throw error
    }
    writeFileSync(probe, '')
    rmSync(probe, { force: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? ''
    const why = (error as Error).message.replace(/^[A-Z]+: /, '')
    throw new FolderUnwritableError(
      `--out ${dir}: cannot write the result folder (${code === '' ? why : `${code}: ${why}`}); choose a writable folder`,
    )
  }
}

/**
 * Makes `dir` ready for a new run: a folder that holds a run is refused (its records would be
 * appended to and the reports would mix two runs) unless `force`, which removes that run's files
 * and leaves any other file alone. A folder holding only a failed preflight's probe is not a run:
 * its files are replaced. A folder that cannot be created or written is refused (FolderUnwritableError).
 * Returns a note for the user when something was removed.
 */
export function prepareResultFolder(dir: string, resultFile: string, force: boolean): string | null {
  ensureWritable(dir)
  const present = runFiles(resultFile).filter((name) => existsSync(join(dir, name)))
  if (present.length === 0) return null
  if (holdsRun(dir, resultFile) && !force)
    throw new FolderInUseError(
      `${dir} already holds a run (${present.join(', ')}): a second run would mix with it. ` +
        'Choose another --out, or pass --force to replace that run (its files only)',
    )
  for (const name of present) rmSync(join(dir, name), { recursive: true, force: true })
  return `${dir}: replaced the previous ${force ? 'run' : 'failed preflight'} (${present.join(', ')})`
}

/** A run got past its preflight: it wrote its summary, or records beyond the probes. */
function holdsRun(dir: string, resultFile: string): boolean {
  if (existsSync(join(dir, resultFile))) return true
  const records = join(dir, RECORDS_FILE)
  if (!existsSync(records)) return false
  // Without a summary the file is a failed preflight's few lines, or a crashed run's: read it.
  return readFileSync(records, 'utf8')
    .split('\n')
    .some((line) => line.trim() !== '' && !/"phase":"(preflight|calibration)"/.test(line))
}

/** A default folder name that is already taken (two runs in the same second) gets -2, -3, ... */
export function freeFolderName(dir: string): string {
  if (!existsSync(dir)) return dir
  for (let n = 2; n < 1000; n++) if (!existsSync(`${dir}-${n}`)) return `${dir}-${n}`
  return `${dir}-${Date.now()}`
}

/** results/<UTC time>-<model>, with characters unsafe in a file name replaced. */
export function defaultOutDir(model: string, now = new Date()): string {
  return join('results', `${utcStamp(now)}-${model.replace(/[^A-Za-z0-9._-]+/g, '_')}`)
}

/** 20261202T230455Z: the UTC time to the second, safe in file and resource names. */
export function utcStamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
}
