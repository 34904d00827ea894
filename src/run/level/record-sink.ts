import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { billedInputTokens } from '../../metrics/workload-figures.js'
import { JsonlWriter } from '../../records/jsonl-writer.js'
import { newRunId } from '../../records/run-identity.js'
import type { RequestRecord } from '../../records/types.js'
import type { RunMeta, ShardInfo } from '../../result/run-meta.js'

/** Anything that follows the run's records as they arrive (k6's outputs): each level's start, every record kept. */
export interface RecordObserver {
  setLevel?(value: number): void
  observe(record: RequestRecord): void
}

/**
 * Where every request of a run goes, probes and warm-up included: tagged with the run's id and the
 * shard, then handed to each observer in turn: requests.jsonl (RecordFile), the run's totals, and
 * whatever watches (the live metrics endpoint, the level being summarized and its progress line).
 */
export class RecordSink {
  readonly runId = newRunId()
  readonly file: RecordFile
  /** Every request sent and the tokens billed for them, for the cost. */
  readonly totals: NonNullable<RunMeta['totals']> = { requests: 0, input_tokens: 0, output_tokens: 0 }
  private readonly observers: RecordObserver[]
  /** --repeat: the run of the level now sending, stamped on its records; null = none (no repeats, probes, the control). */
  repeat: number | null = null
  /** --paired: the pair of blocks now sending, stamped on its records; null = none. */
  pair: number | null = null

  /** `onFailure`: the disk is full; nothing more can be recorded, so the run should stop issuing. */
  constructor(
    readonly path: string,
    private readonly shard: ShardInfo | undefined,
    onFailure: () => void,
  ) {
    this.file = new RecordFile(path, onFailure)
    const totals = this.totals
    this.observers = [
      this.file,
      {
        observe(record) {
          totals.requests++
          totals.input_tokens += billedInputTokens(record)
          totals.output_tokens += record.output_tokens
        },
      },
    ]
  }

  /** Adds an observer; the function returned removes it. */
  watch(observer: RecordObserver): () => void {
    this.observers.push(observer)
    return () => {
      const index = this.observers.indexOf(observer)
      if (index >= 0) this.observers.splice(index, 1)
    }
  }

  /** A level starts: every observer is told before its first record. */
  setLevel(value: number): void {
    for (const observer of this.observers) observer.setLevel?.(value)
  }

  keep(record: RequestRecord): void {
    record.run = this.runId
    if (this.shard !== undefined) record.shard = this.shard.index
    if (this.repeat !== null) record.repeat = this.repeat
    if (this.pair !== null) record.pair = this.pair
    for (const observer of this.observers) observer.observe(record)
  }

  /** Makes the folder and requests.jsonl (see RecordFile.open). */
  open(): void {
    this.file.open()
  }

  /** The records' write failure (a full disk), once it happened. */
  get failure(): Error | null {
    return this.file.failure
  }

  flush(): void {
    this.file.flush()
  }

  close(): void {
    this.file.close()
  }
}

/**
 * requests.jsonl, appended as records arrive. The file (and its folder) is made by `open()`, when
 * the load is about to start: the probes' few records are held until then, so a failed or
 * interrupted preflight leaves no folder behind.
 */
export class RecordFile implements RecordObserver {
  private writer: JsonlWriter | null = null
  private held: RequestRecord[] = []

  constructor(
    readonly path: string,
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

  observe(record: RequestRecord): void {
    if (this.writer === null) this.held.push(record)
    else this.writer.append(record)
  }

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
