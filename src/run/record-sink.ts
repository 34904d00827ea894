import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { billedInputTokens } from '../metrics/workload-figures.js'
import { JsonlWriter } from '../records/jsonl-writer.js'
import { newRunId } from '../records/run-identity.js'
import type { RequestRecord } from '../records/types.js'
import type { RunMeta, ShardInfo } from '../result/run-meta.js'
import type { RecordObserver } from './live-metrics.js'

/**
 * Where every request of a run goes, probes and warm-up included: requests.jsonl (appended as records
 * arrive), tagged with the run's id and the shard, counted into the run's totals. The file (and its
 * folder) is made by `open()`, when the load is about to start: the probes' few records are held until
 * then, so a failed or interrupted preflight leaves no folder behind.
 */
export class RecordSink {
  readonly runId = newRunId()
  /** Every request sent and the tokens billed for them, for the cost. */
  readonly totals: NonNullable<RunMeta['totals']> = { requests: 0, input_tokens: 0, output_tokens: 0 }
  private writer: JsonlWriter | null = null
  private held: RequestRecord[] = []
  /** The live metrics endpoint (--metrics-port), when one is serving. */
  observer: RecordObserver | null = null

  /** `onFailure`: the disk is full; nothing more can be recorded, so the run should stop issuing. */
  constructor(
    readonly path: string,
    private readonly shard: ShardInfo | undefined,
    private readonly onFailure: () => void,
  ) {}

  /** Makes the folder and the file, and writes the records held so far. */
  open(): void {
    if (this.writer !== null) return
    mkdirSync(dirname(this.path), { recursive: true })
    this.writer = new JsonlWriter(this.path, this.onFailure)
    for (const record of this.held) this.writer.append(record)
    this.held = []
  }

  keep(record: RequestRecord): void {
    record.run = this.runId
    if (this.shard !== undefined) record.shard = this.shard.index
    if (this.writer === null) this.held.push(record)
    else this.writer.append(record)
    this.totals.requests++
    this.totals.input_tokens += billedInputTokens(record)
    this.totals.output_tokens += record.output_tokens
    this.observer?.observe(record)
  }

  /** The records' write failure (a full disk), once it happened. */
  get failure(): Error | null {
    return this.writer?.failure ?? null
  }

  flush(): void {
    this.writer?.flush()
  }

  close(): void {
    this.writer?.close()
  }
}
