import { renameSync, writeFileSync } from 'node:fs'

/** Writes JSON atomically (temp file, then rename): a reader never sees a half-written summary. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const temp = `${path}.tmp-${process.pid}`
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`)
  renameSync(temp, path)
}
