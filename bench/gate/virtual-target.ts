/**
 * A target in virtual time: the simulator's own engine (src/model/engine.ts, the code behind
 * `llmbench sim`) on a VirtualClock, driven by closed-loop blocks of requests, its records stamped
 * as the client stamps them. Hundreds of runs take a second, the same on any machine: the gate bench
 * (./run.ts) and the tests that judge runs rather than time them (test/helpers/virtual-run.ts).
 */
import {
  type EngineObserver,
  SimEngine,
  type SimParams,
  type SimStats,
  type VirtualClock,
} from '../../src/model/engine.js'
import { standardNormal } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'

/** Noise of each engine step: a coefficient of variation of 5%, as timer and scheduling noise. */
export const STEP_NOISE = 0.05

/** The host's slowness at a virtual instant, 1 = as quiet as it gets. */
export type Host = (atMs: number) => number

/** A change of the server: its costs multiplied, per kind of cost. */
export interface CostChange {
  decode: number
  prefill: number
}

/**
 * The engine's cost parameters, read at every step (SimEngine reads them as it schedules), as the
 * server's base costs × the change × the host now × this step's noise.
 */
export function hostCosts(
  base: SimParams,
  change: CostChange,
  host: Host,
  clock: VirtualClock,
  random: () => number,
  /** The steps' coefficient of variation. */
  noise = STEP_NOISE,
): SimParams {
  const noisy = (): number => host(clock.now()) * Math.max(0.5, 1 + noise * standardNormal(random))
  return {
    ...base,
    get prefill_base_ms() {
      return base.prefill_base_ms * change.prefill * noisy()
    },
    get prefill_ms_per_token() {
      return base.prefill_ms_per_token * change.prefill * noisy()
    },
    get decode_base_ms() {
      return base.decode_base_ms * change.decode * noisy()
    },
    get decode_ms_per_seq() {
      return base.decode_ms_per_seq * change.decode * noisy()
    },
  }
}

/** What every record of a block carries besides its timings. */
export type BlockStamp = Pick<RequestRecord, 'level' | 'phase'> &
  Partial<Pick<RequestRecord, 'pair' | 'repeat' | 'run' | 'target'>>

/** One target on the shared host: its engine, driven by closed-loop blocks of requests. */
export class Target {
  private readonly engine: SimEngine<number>
  private seq = 0
  constructor(
    params: SimParams,
    private readonly clock: VirtualClock,
    private readonly lengths: { input: number; output: number },
    /** Sees the engine as a server's /metrics does (src/sim/vllm-metrics.ts), for scrapes in virtual time. */
    observer: EngineObserver | null = null,
  ) {
    this.engine = new SimEngine(params, clock, observer)
  }

  /** The engine's counts now: what a /metrics scrape's gauges read. */
  stats(): SimStats {
    return this.engine.stats()
  }

  /**
   * `requests` requests from `streams` closed-loop streams, starting now; runs the clock until they
   * are done (nothing else is loaded meanwhile) and returns their records.
   */
  block(streams: number, requests: number, stamp: BlockStamp): RequestRecord[] {
    const records = this.start(streams, requests, stamp)
    this.clock.runAll()
    return records
  }

  /**
   * The same block started but not run: the records fill in as the clock runs, so several targets on
   * one clock are loaded at the same time (a run's level split over endpoints). `starts`: stream i's
   * first send, ms from now (src/schedule/stagger.ts, as the client staggers them); all at once without.
   * `lengths`: the block's own prompt and output lengths (a calibration probe's), else the target's.
   */
  start(
    streams: number,
    requests: number,
    stamp: BlockStamp,
    starts?: Float64Array,
    lengths = this.lengths,
  ): RequestRecord[] {
    const records: RequestRecord[] = []
    let sent = 0
    const send = (): void => {
      sent++
      const seq = this.seq++
      const sentAt = this.clock.now()
      const tokens: number[] = []
      this.engine.submit(
        { inputTokens: lengths.input, outputTokens: lengths.output },
        {
          onToken: () => tokens.push(this.clock.now()),
          onFinish: () => {
            records.push(record(seq, sentAt, tokens, this.clock.now(), lengths.input, stamp))
            if (sent < requests) send()
          },
        },
      )
    }
    for (let i = 0; i < Math.min(streams, requests); i++) {
      const at = starts?.[i] ?? 0
      if (at > 0) this.clock.after(at, send)
      else send()
    }
    return records
  }
}

function record(
  seq: number,
  sentAt: number,
  tokens: number[],
  endAt: number,
  inputTokens: number,
  stamp: BlockStamp,
): RequestRecord {
  return {
    seq,
    worker: 0,
    ...stamp,
    prompt_id: seq,
    scheduled_at: sentAt,
    sent_at: sentAt,
    headers_at: sentAt,
    first_token_at: tokens[0] ?? null,
    end_at: endAt,
    token_times: tokens,
    status: 200,
    error: null,
    input_tokens: inputTokens,
    output_tokens: tokens.length,
    token_source: 'usage',
    tokenizer_output_tokens: null,
    chunks: tokens.length,
    finish_reason: 'length',
    attempt: 1,
  }
}
