import { readFileSync } from 'node:fs'
import type { RequestRecord } from './types.js'

export interface ReadRecords {
  records: RequestRecord[]
  /** A last line cut short by a crash is tolerated and reported here, not thrown. */
  tornLastLine: boolean
}

/** Reads requests.jsonl back. A malformed line other than the last one is an error with its number. */
export function readRecords(path: string): ReadRecords {
  const lines = readFileSync(path, 'utf8').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  const records: RequestRecord[] = []
  let tornLastLine = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.trim() === '') continue
    try {
      records.push(JSON.parse(line) as RequestRecord)
    } catch {
      if (i === lines.length - 1) {
        tornLastLine = true
        continue
      }
      throw new Error(`${path}: line ${i + 1} is not a JSON record`)
    }
  }
  return { records, tornLastLine }
}
