import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Every file below `dir`, recursively (for checks such as "the key is in no file written"). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

/** None of `secrets` in what was printed, nor in any file below `folder` (null = no folder to read). */
export function assertSecretsNowhere(
  secrets: readonly string[],
  printed: readonly string[],
  folder: string | null,
): void {
  for (const secret of secrets) {
    for (const text of printed) assert.ok(!text.includes(secret), `${secret} printed:\n${text}`)
    if (folder === null) continue
    for (const file of filesUnder(folder))
      assert.ok(!readFileSync(file, 'utf8').includes(secret), `${secret} written to ${file}`)
  }
}
