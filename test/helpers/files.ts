import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Every file below `dir`, recursively (for checks such as "the key is in no file written"). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}
