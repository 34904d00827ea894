import type { ChunkInfo } from '../protocols/chunk.js'
import type { RequestRecord } from '../records/types.js'

/**
 * The two phases of a reasoning model's response, as one request's events show them: when the
 * first reasoning event and the first answer event arrived, how many events carried reasoning, and
 * the reasoning text (handed to the main thread, which counts its tokens when the server does not:
 * see workload/reasoning-counts.ts). first_token_at stays the first of either, so TTFT keeps its
 * meaning; these let a report tell the thinking from the answer.
 */
export class ReasoningPhase {
  private readonly parts: string[] = []

  /** One streamed token-bearing event, stamped `at` on arrival. */
  onEvent(record: RequestRecord, info: ChunkInfo, at: number): void {
    if (info.reasoningBearing) {
      record.first_reasoning_at ??= at
      record.reasoning_events = (record.reasoning_events ?? 0) + 1
      if (info.reasoningText !== undefined) this.parts.push(info.reasoningText)
    }
    if (info.answerBearing) record.first_answer_at ??= at
  }

  /** A non-streamed body: its reasoning text only (a body has no first token to time). */
  onBody(info: ChunkInfo): void {
    if (info.reasoningText !== undefined) this.parts.push(info.reasoningText)
  }

  /** Hands the reasoning text over with the record (transient: the main thread drops it after counting). */
  finish(record: RequestRecord): void {
    if (this.parts.length > 0) record.reasoning_text = this.parts.join('')
    this.parts.length = 0
  }
}
