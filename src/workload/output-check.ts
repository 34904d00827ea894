import { isObject } from '../json-object.js'
import type { StructuredOutput } from '../protocols/structured-parts.js'
import type { OutputCheckResult, RequestRecord, ToolCallPart } from '../records/types.js'
import type { z } from '../zod.js'
import { compileSchema } from './structured-output.js'

/**
 * Whether each answer is what was asked for (--response-schema, --tools): checked on the main thread
 * as records arrive, before their text is dropped (token-counts.ts), so no load thread parses JSON
 * or validates anything. A correctness figure beside the speed ones: a server that answers fast with
 * JSON that does not validate has not done the work.
 */
export class OutputCheck {
  private readonly schema: z.ZodType | null
  private readonly tools: Map<string, z.ZodType> | null

  constructor(output: StructuredOutput) {
    this.schema = output.schema === null ? null : compileSchema(output.schema.schema, 'response_schema')
    this.tools =
      output.tools === null
        ? null
        : new Map(output.tools.map((tool) => [tool.name, compileSchema(tool.parameters, tool.name)]))
  }

  /** Sets the record's checks from its answer; a failed request is not checked (its failure is the figure). */
  check(record: RequestRecord): void {
    const streamed = record.tool_call_parts
    delete record.tool_call_parts
    if (record.error !== null) return
    const text = answerText(record)
    const cut = record.finish_reason === 'length'
    let calls = streamed ?? []
    if (this.tools !== null) {
      // An engine may leave a tool call unparsed in the answer's text (llama.cpp's generic format
      // when the output runs to max_tokens): it is still the call the model made.
      const inText = streamed === undefined ? callsInText(text) : null
      if (inText !== null) calls = inText
      if (calls.length === 0 && cut && UNFINISHED_CALL.test(text)) {
        // A call in the text that max_tokens cut before it closed: made, and not valid.
        record.tool_calls = 1
        record.tool_call_source = 'text'
        record.tool_check = 'truncated'
        return
      }
      record.tool_calls = calls.length
      if (calls.length > 0) record.tool_call_source = inText === null ? 'deltas' : 'text'
      record.tool_check = calls.length === 0 ? 'none' : this.checkCalls(calls, cut)
    }
    if (this.schema !== null && calls.length === 0)
      record.schema_check = verdict(validates(this.schema, text), cut)
  }

  private checkCalls(calls: readonly ToolCallPart[], cut: boolean): OutputCheckResult {
    const tools = this.tools as Map<string, z.ZodType>
    const ok = calls.every((call) => {
      const schema = tools.get(call.name)
      return schema !== undefined && validates(schema, call.arguments)
    })
    return verdict(ok, cut)
  }
}

/** The opening of a tool call written as text, `{"tool_call": ...` or `{"tool_calls": ...`. */
const UNFINISHED_CALL = /^\s*\{\s*"tool_calls?"\s*:/

/** Invalid and cut by max_tokens: the model may have been on its way to a valid answer. */
function verdict(valid: boolean, cut: boolean): OutputCheckResult {
  return valid ? 'valid' : cut ? 'truncated' : 'invalid'
}

function validates(schema: z.ZodType, text: string): boolean {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return false
  }
  return schema.safeParse(value).success
}

/** The answer without the reasoning streamed before it (output_text holds both, reasoning first). */
function answerText(record: RequestRecord): string {
  const text = record.output_text ?? ''
  const reasoning = record.reasoning_text ?? ''
  return reasoning !== '' && text.startsWith(reasoning) ? text.slice(reasoning.length) : text
}

/** `{"tool_call": {name, arguments}}` or `{"tool_calls": [...]}` as the whole answer; null when it is not one. */
export function callsInText(text: string): ToolCallPart[] | null {
  if (!text.trimStart().startsWith('{')) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  if (!isObject(value)) return null
  const list = Array.isArray(value.tool_calls)
    ? value.tool_calls
    : isObject(value.tool_call)
      ? [value.tool_call]
      : null
  if (list === null) return null
  const calls: ToolCallPart[] = []
  for (const entry of list) {
    const call = isObject(entry) && isObject(entry.function) ? entry.function : entry
    if (!isObject(call) || typeof call.name !== 'string') return null
    const args = call.arguments ?? call.parameters
    calls.push({ name: call.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? null) })
  }
  return calls
}
