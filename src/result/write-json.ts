import { renameSync, rmSync, writeFileSync } from 'node:fs'

/** Writes JSON atomically (temp file, then rename): a reader never sees a half-written summary. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const temp = `${path}.tmp-${process.pid}`
  try {
    writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`)
  } catch (error) {
    // A disk that filled up mid-write leaves no half file beside the previous, intact summary.
    rmSync(temp, { force: true })
    // A failed write (unlike an open) names no file: name the one being written.
    const failure = error as NodeJS.ErrnoException
    if (failure.path === undefined) failure.path = path
    throw error
  }
  renameSync(temp, path)
}
