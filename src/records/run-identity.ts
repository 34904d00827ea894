import { randomBytes } from 'node:crypto'
import type { RequestRecord } from './types.js'

/** A new run's id: 12 hex digits, on its meta and on every record it writes. */
export function newRunId(): string {
  return randomBytes(6).toString('hex')
}

/** The records of a requests.jsonl that belong to the run its summary describes. */
export interface OneRun {
  records: RequestRecord[]
  /** Records of other runs found in the same file and left out (0 when there were none). */
  ignored: number
}

/** A records file holding more than one run, which no report may mix. */
export class MixedRunsError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MixedRunsError'
  }
}

/**
 * Keeps one run's records. Records carry their run's id (`run`), and every shard of a merged run
 * has its own, so the test is per shard: more than one id in a shard's records means two runs were
 * written into one file. They are separated when the summary names its own id (`runId`), else
 * refused. Records from before ids existed are told apart by their sequence numbers: each worker
 * numbers its requests once per run, so a repeated (worker, seq) means a second run was appended.
 */
export function recordsOfOneRun(records: RequestRecord[], runId: string | undefined, file: string): OneRun {
  const idsByShard = new Map<number, Set<string | undefined>>()
  for (const record of records) {
    const shard = record.shard ?? -1
    const ids = idsByShard.get(shard) ?? new Set<string | undefined>()
    if (ids.size === 0) idsByShard.set(shard, ids)
    ids.add(record.run)
  }
  const mixed = [...idsByShard.values()].find((ids) => ids.size > 1)
  if (mixed !== undefined) {
    const names = [...mixed].map((id) => id ?? '(no id: an older version)').join(', ')
    if (runId !== undefined && records.some((record) => record.run === runId)) {
      // Only the shards that hold two runs are filtered: a merged run's other shards keep their own ids.
      const own = records.filter(
        (record) => record.run === runId || (idsByShard.get(record.shard ?? -1)?.size ?? 0) <= 1,
      )
      return { records: own, ignored: records.length - own.length }
    }
    throw new MixedRunsError(
      `${file} holds the records of more than one run (ids ${names}) and its summary names none of them: ` +
        'figures would mix runs on different clocks. Re-run into an empty folder (run --out DIR), or split the file by its "run" field',
    )
  }
  const repeated = repeatedSequence(records)
  if (repeated !== null)
    throw new MixedRunsError(
      `${file} holds more than one run: request ${repeated.seq} of worker ${repeated.worker} appears again as record ${repeated.line} ` +
        '(an older llmbench appended a second run to the same --out folder). Figures would mix runs on different clocks: ' +
        'keep the lines of one run only, or re-run into an empty folder',
    )
  return { records, ignored: 0 }
}

/** The first (worker, seq) seen twice in one shard, among records without a run id; null if none. */
function repeatedSequence(
  records: readonly RequestRecord[],
): { worker: number; seq: number; line: number } | null {
  const seen = new Set<string>()
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as RequestRecord
    // Preflight and calibration probes all carry seq -1; ids make the check unneeded.
    if (record.seq < 0 || record.run !== undefined) continue
    const key = `${record.shard ?? -1}:${record.worker}:${record.seq}`
    if (seen.has(key)) return { worker: record.worker, seq: record.seq, line: i + 1 }
    seen.add(key)
  }
  return null
}
