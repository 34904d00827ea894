import { billedInputTokens } from '../metrics/workload-figures.js'
import { JsonlWriter } from '../records/jsonl-writer.js'
import { newRunId } from '../records/run-identity.js'
import type { RequestRecord } from '../records/types.js'
import type { RunMeta, ShardInfo } from '../result/run-meta.js'
import type { RecordObserver } from './live-metrics.js'

/**
 * Where every request of a run goes, probes and warm-up included: requests.jsonl (appended as records
 * arrive), tagged with the run's id and the shard, counted into the run's totals.
 */
export class RecordSink {
  readonly runId = newRunId()
  /** Every request sent and the tokens billed for them, for the cost. */
  readonly totals: NonNullable<RunMeta['totals']> = { requests: 0, input_tokens: 0, output_tokens: 0 }
  private readonly writer: JsonlWriter
  /** The live metrics endpoint (--metrics-port), when one is serving. */
  observer: RecordObserver | null = null

  /** `onFailure`: the disk is full; nothing more can be recorded, so the run should stop issuing. */
  constructor(
    readonly path: string,
    private readonly shard: ShardInfo | undefined,
    onFailure: () => void,
  ) {
    this.writer = new JsonlWriter(path, onFailure)
  }

  keep(record: RequestRecord): void {
    record.run = this.runId
    if (this.shard !== undefined) record.shard = this.shard.index
    this.writer.append(record)
    this.totals.requests++
    this.totals.input_tokens += billedInputTokens(record)
    this.totals.output_tokens += record.output_tokens
    this.observer?.observe(record)
  }

  /** The records' write failure (a full disk), once it happened. */
  get failure(): Error | null {
    return this.writer.failure
  }

  flush(): void {
    this.writer.flush()
  }

  close(): void {
    this.writer.close()
  }
}
