import type { OutputCheckResult, RequestRecord } from '../records/types.js'
import { type Accumulator, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { type Distribution, round } from './distribution.js'
import { accumulator } from './figure.js'

/**
 * --response-schema and --tools: how many of a level's successful answers were what was asked for
 * (workload/output-check.ts set each record's check), and when the first tool call began.
 */

export interface CheckCounts {
  /** Successful requests checked. */
  checked: number
  valid: number
  /** Invalid, and not cut by max_tokens. */
  invalid: number
  /** Invalid and cut by max_tokens (finish_reason length). */
  truncated: number
  /** valid / checked; null when none was. */
  valid_share: number | null
}

export interface StructuredFigures {
  /** --response-schema: answers given as text, checked against the schema; null without a schema. */
  schema: CheckCounts | null
  /** --tools: answers that called a tool (`checked`), their arguments checked; null without tools. */
  tools:
    | (CheckCounts & {
        /** Successful requests. */
        requests: number
        /** Share of them that called a tool. */
        call_share: number | null
        /** Calls in all (an answer may make several). */
        calls: number
        /** Answers whose call was read from the text (an engine left it unparsed), not from tool-call deltas. */
        from_text: number
        /** Send to the first tool-call delta, ms (streamed answers that called a tool). */
        first_call_ms: Distribution
      })
    | null
}

function counter(): CheckCounts & { add(result: OutputCheckResult): void } {
  const counts = {
    checked: 0,
    valid: 0,
    invalid: 0,
    truncated: 0,
    valid_share: null as number | null,
    add(result: OutputCheckResult) {
      counts.checked++
      counts[result]++
    },
  }
  return counts
}

function finished(counts: ReturnType<typeof counter>): CheckCounts {
  return {
    checked: counts.checked,
    valid: counts.valid,
    invalid: counts.invalid,
    truncated: counts.truncated,
    valid_share: counts.checked === 0 ? null : round(counts.valid / counts.checked, 4),
  }
}

export function structuredAccumulator(percentiles: readonly number[]): Accumulator<StructuredFigures | null> {
  const schema = counter()
  const tools = counter()
  let sawSchema = false
  let sawTools = false
  let requests = 0
  let calls = 0
  let fromText = 0
  const firstCall = new Samples()
  return accumulator(
    (record: RequestRecord) => {
      if (!isOk(record)) return
      if (record.schema_check !== undefined) {
        sawSchema = true
        schema.add(record.schema_check)
      }
      if (record.tool_check === undefined) return
      sawTools = true
      requests++
      if (record.tool_check === 'none') return
      tools.add(record.tool_check)
      calls += record.tool_calls ?? 0
      if (record.tool_call_source === 'text') fromText++
      if (record.first_tool_call_at != null) firstCall.push(record.first_tool_call_at - record.sent_at)
    },
    () => {
      if (!sawSchema && !sawTools) return null
      return {
        schema: sawSchema ? finished(schema) : null,
        tools: sawTools
          ? {
              ...finished(tools),
              requests,
              call_share: requests === 0 ? null : round(tools.checked / requests, 4),
              calls,
              from_text: fromText,
              first_call_ms: firstCall.distribution(percentiles),
            }
          : null,
      }
    },
  )
}

/** The share of checked answers that were valid, schema and tool calls together; null when nothing was checked. */
export function outputValidShare(figures: StructuredFigures | null | undefined): number | null {
  if (figures == null) return null
  const checked = (figures.schema?.checked ?? 0) + (figures.tools?.checked ?? 0)
  const valid = (figures.schema?.valid ?? 0) + (figures.tools?.valid ?? 0)
  return checked === 0 ? null : round(valid / checked, 4)
}
