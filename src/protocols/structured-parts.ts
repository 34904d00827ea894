/**
 * Structured output and tool calling as a request body carries them: the answer's JSON Schema and
 * the functions offered, in the shape a protocol's API takes (chat completions' `response_format`,
 * `tools` and `tool_choice`). The run's settings are read into a StructuredOutput above this floor
 * (workload/structured-output.ts); the protocol's body builder writes it (protocol-bodies.ts), and
 * only a protocol whose descriptor carries structured output or tools is handed one.
 */

/** A JSON Schema object as written (the file's, or the built-in one). */
export type JsonSchema = Record<string, unknown>

export interface ToolFunction {
  name: string
  description?: string
  parameters: JsonSchema
}

export interface StructuredOutput {
  /** The answer's schema (response_format), null = none asked. */
  schema: { name: string; schema: JsonSchema } | null
  /** The functions offered (tools), null = none. */
  tools: ToolFunction[] | null
  toolChoice: string
  /**
   * How response_format asks for the schema: OpenAI's `{type: "json_schema", json_schema: {name,
   * strict, schema}}`, or `{type: "json_object", schema}`, the form every llama.cpp build reads (builds
   * of early 2025 ignore the other and answer free text). Absent = openai.
   */
  schemaForm?: 'openai' | 'json-object'
}

/** The tool choices every API names; anything else is one tool's name. */
export const TOOL_CHOICES: ReadonlySet<string> = new Set(['auto', 'required', 'none'])

/** What a chat completions body carries beside its messages for this structured output. */
export function chatStructuredFields(output: StructuredOutput): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  if (output.schema !== null)
    fields.response_format =
      output.schemaForm === 'json-object'
        ? { type: 'json_object', schema: output.schema.schema }
        : {
            type: 'json_schema',
            json_schema: { name: output.schema.name, strict: true, schema: output.schema.schema },
          }
  if (output.tools !== null) {
    fields.tools = output.tools.map((fn) => ({ type: 'function', function: fn }))
    fields.tool_choice = TOOL_CHOICES.has(output.toolChoice)
      ? output.toolChoice
      : { type: 'function', function: { name: output.toolChoice } }
  }
  return fields
}
